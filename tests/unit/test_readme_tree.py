"""scripts/readme_tree.py: the README's module tree, rendered from docstrings and checked."""

from __future__ import annotations

from pathlib import Path

from scripts.readme_tree import END, START, collect, main, render

README = f"# pkg\n\nBefore.\n\n{START}\n```\n```\n{END}\n\nAfter.\n"


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _tree(tmp_path: Path) -> Path:
    _write(
        tmp_path,
        {
            "daemon/__init__.py": '"""The daemon."""\n',
            "daemon/zeta.py": '"""Last module.\n\nMore that the tree does not show."""\n',
            "daemon/alpha.py": '"""First module."""\nimport does_not_exist\n',
            "daemon/engine/__init__.py": '"""The engine."""\n',
            "daemon/engine/worker.py": '"""The worker."""\n',
            "lsp/__init__.py": '"""The language server."""\n',
            "models/__init__.py": '"""Models."""\n',
            "README.md": README,
        },
    )
    return tmp_path


def _run(root: Path, *args: str) -> int:
    return main(["--root", str(root), *args])


def test_the_tree_shows_each_first_docstring_line_in_name_order(tmp_path):
    root = _tree(tmp_path)
    assert render(collect(root)) == (
        "daemon/        The daemon.\n"
        "  alpha.py     First module.\n"
        "  engine/      The engine.\n"
        "    worker.py  The worker.\n"
        "  zeta.py      Last module.\n"
        "lsp/           The language server.\n"
        "models/        Models.\n"
    )


def test_a_long_summary_wraps_under_its_column(tmp_path):
    root = _tree(tmp_path)
    _write(root, {"daemon/alpha.py": '"""' + "word " * 30 + 'end."""\n'})
    lines = render(collect(root)).splitlines()
    assert lines[1].startswith("  alpha.py     word") and len(lines[1]) <= 100
    assert lines[2].startswith(" " * 15 + "word")


def test_writing_then_checking_passes_and_keeps_the_prose(tmp_path, capsys):
    root = _tree(tmp_path)
    assert _run(root, "--check") == 1
    assert _run(root) == 0
    text = (root / "README.md").read_text()
    assert text.startswith("# pkg\n\nBefore.\n") and text.endswith(f"{END}\n\nAfter.\n")
    assert "  engine/      The engine.\n" in text
    assert _run(root, "--check") == 0


def test_the_check_names_missing_stale_and_gone_modules(tmp_path, capsys):
    root = _tree(tmp_path)
    assert _run(root) == 0
    (root / "daemon/zeta.py").unlink()
    _write(root, {"daemon/beta.py": '"""New."""\n', "daemon/alpha.py": '"""First, again."""\n'})
    capsys.readouterr()
    assert _run(root, "--check") == 1
    err = capsys.readouterr().err
    assert "missing: daemon/beta.py" in err
    assert "stale:   daemon/alpha.py (now 'First, again.')" in err
    assert "gone:    daemon/zeta.py" in err
    assert "make readme-tree" in err


def test_a_module_without_a_docstring_fails_by_name(tmp_path, capsys):
    root = _tree(tmp_path)
    _write(root, {"daemon/engine/bare.py": "x = 1\n", "lsp/__init__.py": "# no docstring\n"})
    assert _run(root, "--check") == 1
    err = capsys.readouterr().err
    assert "daemon/engine/bare.py" in err and "lsp/__init__.py" in err
    assert _run(root) == 1
    assert (root / "README.md").read_text() == README


def test_a_readme_without_the_markers_fails_with_a_message(tmp_path, capsys):
    root = _tree(tmp_path)
    (root / "README.md").write_text("# pkg\n")
    assert _run(root, "--check") == 1
    assert START in capsys.readouterr().err
