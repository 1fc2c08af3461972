"""The Jinja2 environment every emitter renders with.

``StrictUndefined`` makes a missing value an error instead of an empty string; ``sh`` quotes a
value for the shell (every value that reaches a shell goes through it); ``json`` writes a YAML/JSON
scalar; ``comment`` keeps text on one line so it cannot leave a ``#`` comment.
"""

from __future__ import annotations

import functools
import json
import shlex
from typing import Any

import jinja2

from primus_lang.resources import data_dir


def shell_quote(value: object) -> str:
    text = str(value)
    quoted = shlex.quote(text)
    if quoted == text and "," in text:
        # shellcheck reads a bare comma inside an array as a mistaken separator (SC2054)
        return f"'{text}'"
    return quoted


def json_scalar(value: object) -> str:
    # JSON scalars are valid YAML flow scalars; ASCII escapes keep the files plain.
    return json.dumps(value, ensure_ascii=True)


def one_line(value: object) -> str:
    return json.dumps(str(value), ensure_ascii=True)[1:-1]


def enroot_image(image: str) -> str:
    """An image as pyxis passes it to enroot: ``REGISTRY#PATH:TAG``. enroot before 4.0 reads
    ``nvcr.io/nvidia/nemo:25.09`` as a Docker Hub image named so; the ``#`` form names the registry
    in every version. A squashfs file, or an image already in that form or on Docker Hub, stays."""
    first, slash, rest = image.partition("/")
    registry = "." in first or ":" in first or first == "localhost"
    if "#" in image or image.startswith(("/", "./", "docker://")) or not slash or not registry:
        return image
    return f"{first}#{rest}"


def k8s_bytes(size: int) -> str:
    """A byte count as a Kubernetes quantity a reader takes in at a glance: in the largest binary unit that
    holds it whole (``512Gi``), else bytes."""
    for unit, scale in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{unit}"
    return str(size)


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("emitters"))),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["sh"] = shell_quote
    env.filters["json"] = json_scalar
    env.filters["comment"] = one_line
    env.filters["enroot"] = enroot_image
    env.filters["k8s_bytes"] = k8s_bytes
    return env


def render(template: str, **values: Any) -> str:
    return environment().get_template(template).render(**values)
