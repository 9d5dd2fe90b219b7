"""Documents the end-to-end tests complete."""

from __future__ import annotations

import uuid

LOAD_CONFIG = '''import json
from pathlib import Path


def load_config(path: Path) -> dict:
    """Read a JSON config file and return it as a dict."""
    '''

# Completing this list goes on for as long as the model is allowed to.
NUMBERS = "NUMBERS = [\n" + "".join(f"    {i},\n" for i in range(1, 40)) + "    "


def unique(text: str) -> str:
    """The same document with a first line of its own, so no cache or KV prefix applies."""
    return f"# {uuid.uuid4().hex}\n{text}"


def end_position(text: str) -> tuple[int, int]:
    lines = text.split("\n")
    return len(lines) - 1, len(lines[-1])


def complete_body(text: str, **extra: object) -> dict[str, object]:
    line, column = end_position(text)
    body: dict[str, object] = {"text": text, "line": line, "column": column, "path": "app.py"}
    body.update(extra)
    return body
