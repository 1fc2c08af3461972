"""What a test's child process needs to hear Ctrl-C."""

import signal


def hear_sigint() -> None:
    """Give the child the default SIGINT disposition before it starts. A shell without job control
    starts background commands with SIGINT ignored, their children inherit that, and Python then
    installs no KeyboardInterrupt handler: a test run from such a script saw its child ignore the
    signal it sent."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
