"""A package as a programmer has it checked out: its modules copied into a folder of their own
with a ``pyproject.toml`` stating what the installed package's metadata states (name, version,
``requires-python``, its unconditional dependencies), so the workspace profile, the imports and
the sibling modules are those of a real project. A completion request for a case is built the
way ``assist complete FILE --line L --column C`` builds it, from the case's document written in
place of the module.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import shutil
from pathlib import Path

from daemon.cli.complete import build_request
from daemon.protocol import CompleteRequest
from tests.bench.realcode.cases import DISTRIBUTIONS, Document


def _pyproject(package: str) -> str:
    meta = importlib.metadata.metadata(DISTRIBUTIONS.get(package, package))
    requires = [r for r in meta.get_all("Requires-Dist") or [] if "extra ==" not in r]
    lines = [
        "[project]",
        f'name = "{meta["Name"]}"',
        f'version = "{meta["Version"]}"',
    ]
    python = meta.get_all("Requires-Python") or []
    if python:
        lines.append(f'requires-python = "{python[0]}"')
    lines.append("dependencies = [" + ", ".join(f'"{r}"' for r in requires) + "]")
    return "\n".join(lines) + "\n"


class Checkouts:
    """One checkout per package under ``work``, made on first use."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.made: dict[str, Path] = {}

    def root(self, package: str, source: Path) -> Path:
        """The checkout of ``package``, copied from ``source`` (its directory) on first use."""
        if package not in self.made:
            root = self.work / f"checkout-{package}"
            if not root.exists():
                shutil.copytree(
                    source,
                    root / package,
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"),
                )
                (root / "pyproject.toml").write_text(_pyproject(package), encoding="utf-8")
            self.made[package] = root
        return self.made[package]

    def request(self, document: Document, *, context: bool = True) -> CompleteRequest:
        """The request ``assist complete`` sends for the document's cursor (the module
        rewritten with the document for the time it takes, then put back)."""
        case = document.case
        file = self.root(case.package, document.root / case.package) / case.package / case.path
        original = file.read_bytes()
        file.write_text(document.text, encoding="utf-8")
        try:
            args = argparse.Namespace(
                file=file,
                line=case.line + 1,
                column=case.column + 1,
                workspace=None,
                language=None,
                request_max_tokens=None,
                no_cache=True,
                no_context=not context,
            )
            return build_request(args)
        finally:
            file.write_bytes(original)
