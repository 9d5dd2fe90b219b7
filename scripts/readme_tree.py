"""Write the README's module tree from each module's first docstring line, or check it.
Run with no argument to write the tree between the README's markers; ``--check`` to test it.
"""

from __future__ import annotations

import argparse
import ast
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("daemon", "lsp", "models")
START = "<!-- tree: start -->"
END = "<!-- tree: end -->"
REGENERATE = "make readme-tree"
WIDTH = 100  # a tree line's length before its description wraps
INDENT = 2  # columns per level of the tree


@dataclass(frozen=True)
class Entry:
    """One line of the tree: a package (its ``__init__.py``) or a module."""

    key: str  # the path shown, relative to the root: ``daemon/engine/`` or ``daemon/errors.py``
    name: str  # the last part of the key: ``engine/`` or ``errors.py``
    depth: int
    summary: str  # the docstring's first line; empty when the module has no docstring


class TreeError(Exception):
    """The tree cannot be rendered or the README cannot hold it; the message says why."""


def first_line(path: Path) -> str:
    """The first line of a module's docstring, read with ``ast``; empty when it has none."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return doc.strip().splitlines()[0].strip() if doc and doc.strip() else ""


def package_entries(root: Path, package: Path, depth: int) -> list[Entry]:
    """The package's own entry, then its modules and subpackages in name order."""
    init = package / "__init__.py"
    key = package.relative_to(root).as_posix() + "/"
    if not init.is_file():
        raise TreeError(f"{key} has Python modules but no __init__.py")
    entries = [Entry(key, package.name + "/", depth, first_line(init))]
    children = sorted(
        child
        for child in package.iterdir()
        if (child.suffix == ".py" and child.name != "__init__.py" and child.is_file())
        or (child.is_dir() and any(child.rglob("*.py")))
    )
    for child in children:
        if child.is_dir():
            entries += package_entries(root, child, depth + 1)
        else:
            rel = child.relative_to(root).as_posix()
            entries.append(Entry(rel, child.name, depth + 1, first_line(child)))
    return entries


def collect(root: Path, packages: tuple[str, ...] = PACKAGES) -> list[Entry]:
    """Every package and module of ``packages`` under ``root``, in the tree's order."""
    entries: list[Entry] = []
    for name in packages:
        entries += package_entries(root, root / name, 0)
    return entries


def without_docstring(entries: list[Entry]) -> list[str]:
    """The files of the entries whose module has no docstring."""
    return [
        entry.key + "__init__.py" if entry.key.endswith("/") else entry.key
        for entry in entries
        if not entry.summary
    ]


def render(entries: list[Entry]) -> str:
    """The tree as text: names indented by depth, each summary in one column, wrapped."""
    column = max(entry.depth * INDENT + len(entry.name) for entry in entries) + 2
    lines: list[str] = []
    for entry in entries:
        head = (" " * (entry.depth * INDENT) + entry.name).ljust(column)
        lines += textwrap.wrap(
            entry.summary,
            width=WIDTH,
            initial_indent=head,
            subsequent_indent=" " * column,
            break_long_words=False,
            break_on_hyphens=False,
        )
    return "\n".join(lines) + "\n"


def parse(tree: str) -> dict[str, str]:
    """The entries of a rendered tree, by key, with their summaries (wrapped lines joined)."""
    lines = [line for line in tree.splitlines() if line.strip()]
    if not lines:
        return {}
    first = lines[0]
    name_end = len(first) - len(first.lstrip()) + len(first.split()[0])
    rest = first[name_end:]
    column = name_end + len(rest) - len(rest.lstrip()) if rest.strip() else len(first) + 1
    found: dict[str, str] = {}
    parents: list[str] = []
    key = ""
    for line in lines:
        lead = len(line) - len(line.lstrip())
        if lead >= column and key:
            found[key] = (found[key] + " " + line.strip()).strip()
            continue
        name, _, summary = line.strip().partition(" ")
        del parents[lead // INDENT :]
        key = "".join(parents) + name
        if name.endswith("/"):
            parents.append(name)
        found[key] = summary.strip()
    return found


def split_readme(text: str) -> tuple[str, str, str]:
    """The README around its tree: the text up to the start marker's fence, the tree, the rest."""
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise TreeError(f"README.md needs one {START} line followed by one {END} line")
    head, _, rest = text.partition(START + "\n")
    block, _, tail = rest.partition(END)
    lines = block.splitlines(keepends=True)
    if len(lines) < 2 or not lines[0].startswith("```") or lines[-1].strip() != "```":
        raise TreeError(f"between {START} and {END}, README.md needs one ``` block")
    return head + START + "\n" + lines[0], "".join(lines[1:-1]), lines[-1] + END + tail


def differences(written: str, rendered: str) -> list[str]:
    """What differs between the README's tree and the rendered one, a line per module."""
    old, new = parse(written), parse(rendered)
    report = [f"  missing: {key}" for key in new if key not in old]
    changed = [key for key in new if key in old and old[key] != new[key]]
    report += [f"  stale:   {key} (now {new[key]!r})" for key in changed]
    report += [f"  gone:    {key}" for key in old if key not in new]
    if not report and written != rendered:
        report.append("  the order or the layout of the lines")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="exit 1 if the README's tree is stale")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    parser.add_argument("--readme", type=Path, help="the README (default: ROOT/README.md)")
    args = parser.parse_args(argv)
    readme: Path = args.readme or args.root / "README.md"
    try:
        entries = collect(args.root)
        head, written, tail = split_readme(readme.read_text(encoding="utf-8"))
    except TreeError as error:
        print(f"{readme}: {error}", file=sys.stderr)
        return 1
    bare = without_docstring(entries)
    if bare:
        print("modules without a docstring (the tree shows its first line):", file=sys.stderr)
        print("\n".join(f"  {path}" for path in bare), file=sys.stderr)
        return 1
    rendered = render(entries)
    if rendered == written:
        return 0
    if args.check:
        print(f"{readme}: the module tree is out of date:", file=sys.stderr)
        print("\n".join(differences(written, rendered)), file=sys.stderr)
        print(f"regenerate it with `{REGENERATE}`", file=sys.stderr)
        return 1
    readme.write_text(head + rendered + tail, encoding="utf-8")
    print(f"{readme}: module tree written ({len(entries)} entries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
