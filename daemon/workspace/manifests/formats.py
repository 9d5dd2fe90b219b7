"""Small parsers for config text: JSON with comments, a subset of YAML, nested TOML/JSON tables."""

from __future__ import annotations

import re
from typing import Any


def strip_json_comments(text: str) -> str:
    """JSONC to JSON: drop // and /* */ comments and trailing commas, leaving strings intact."""
    out: list[str] = []
    comma = -1  # where in ``out`` a comma awaits the next value (dropped if none comes)
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            comma = -1
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            if ch in "}]" and comma >= 0:
                out[comma] = ""
            if ch == ",":
                comma = len(out)
            elif not ch.isspace():
                comma = -1
            out.append(ch)
            i += 1
    return "".join(out)


_YAML_LINE = re.compile(
    r"""^(?P<indent>\s*)(?:'(?P<sq>[^']*)'|"(?P<dq>[^"]*)"|(?P<plain>[^\s'"#][^#]*?))"""
    r"""\s*:(?:\s+(?P<value>.*?))?\s*$"""
)


def _yaml_scalar(value: str) -> str | int | bool:
    if value[:1] in "'\"":
        return value[1:].split(value[0], 1)[0]
    value = value.split(" #", 1)[0].strip()
    if value in ("true", "True", "false", "False"):
        return value.lower() == "true"
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    return value


def parse_simple_yaml(text: str) -> dict[str, Any]:
    """Nested block mappings of plain scalars: enough for lockfiles and style configs.

    Lists and flow collections are skipped or kept as text; no YAML library is needed for the
    handful of keys we read.
    """
    root: dict[str, Any] = {}
    stack: list[tuple[int, dict[str, Any]]] = [(-1, root)]
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped == "-" or stripped.startswith(("#", "---", "- ")):
            continue
        match = _YAML_LINE.match(raw)
        if not match:
            continue
        indent = len(match["indent"].expandtabs())
        key = match["sq"] if match["sq"] is not None else match["dq"]
        if key is None:
            key = match["plain"].strip()
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        value = match["value"]
        if not value:
            child: dict[str, Any] = {}
            parent[key] = child
            stack.append((indent, child))
        else:
            parent[key] = _yaml_scalar(value)
    return root


def table_at(data: Any, *keys: str) -> dict[str, Any]:
    """``data[k1][k2]...`` when every step is a table, else an empty one."""
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}
