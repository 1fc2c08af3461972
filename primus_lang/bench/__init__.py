"""The benchmark oracle: kernels timed on the device at hand, collectives measured in scope and
restored beyond it, a reduced model's layers run for real and composed into the full step.

torch is optional (the ``bench`` extra); nothing here imports it until a measurement is asked for.
"""
