"""What a definition in another file looks like from outside: the outlines' shared shape.
Shared by the Python (``python_outline``) and TypeScript/JavaScript (``script_outline``) outlines.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# The outline of a whole module (``import pkg.mod``, ``import * as ns``) stops growing past this.
MAX_SUMMARY_CHARS = 2500


@dataclass(frozen=True)
class Definition:
    name: str
    line: int  # 0-based line where the definition (its doc comment or decorator) starts
    text: str  # what the name looks like from outside: signature, docstring, members
    header: str  # its header alone, for an outline of the whole module; ends with a newline


def summarize(
    definitions: Iterable[Definition], lead: str = "", limit: int = MAX_SUMMARY_CHARS
) -> str:
    """Headers of ``definitions`` in order, after ``lead``, within ``limit`` characters."""
    parts = [lead] if lead else []
    used = len(lead)
    for definition in definitions:
        if used + len(definition.header) > limit:
            break
        parts.append(definition.header)
        used += len(definition.header)
    return "".join(parts)
