"""Gathering context for a completion: the ring of recent edits, the order of the snippets,
and what is left out (the document itself, what the model already sees, near-duplicates)."""

from __future__ import annotations

from pathlib import Path

from daemon.workspace.context import display_path, gather_context, jaccard
from daemon.workspace.imports import OutlineCache
from daemon.workspace.recent import MAX_DOCUMENT_CHARS, RecentChunk, RecentEdits
from tests.unit.test_workspace_imports import tree


def numbered(n: int, name: str = "line") -> str:
    return "\n".join(f"{name}_{i} = {i}" for i in range(n))


# -- the ring of recent edits ------------------------------------------------------------------
def test_recent_edits_keep_a_chunk_around_each_edit_newest_first():
    recent = RecentEdits(limit=3, radius=2)
    recent.record(Path("/w/a.py"), numbered(30), 10)
    recent.record(Path("/w/b.py"), numbered(30), 0, 1)
    chunks = recent.chunks()
    assert [c.path.name for c in chunks] == ["b.py", "a.py"]
    assert chunks[1].text == numbered(13).split("\n", 8)[-1]  # lines 8..12
    assert (chunks[1].first_line, chunks[1].last_line) == (8, 12)
    assert (chunks[0].first_line, chunks[0].last_line) == (0, 3)


def test_an_edit_near_an_earlier_one_replaces_its_chunk():
    recent = RecentEdits(radius=3)
    text = numbered(40)
    recent.record(Path("/w/a.py"), text, 10)
    recent.record(Path("/w/a.py"), text.replace("line_11 = 11", "line_11 = 'edited'"), 11)
    (chunk,) = recent.chunks()
    assert "line_11 = 'edited'" in chunk.text and (chunk.first_line, chunk.last_line) == (8, 14)
    recent.record(Path("/w/a.py"), text, 30)  # far away: a second chunk
    assert [c.first_line for c in recent.chunks()] == [27, 8]


def test_the_ring_is_bounded_and_forgets_closed_documents():
    recent = RecentEdits(limit=4, radius=1)
    for i in range(10):
        recent.record(Path(f"/w/f{i}.py"), numbered(5), 2)
    assert [c.path.name for c in recent.chunks()] == ["f9.py", "f8.py", "f7.py", "f6.py"]
    recent.forget(Path("/w/f8.py"))
    assert [c.path.name for c in recent.chunks()] == ["f9.py", "f7.py", "f6.py"]


def test_a_chunk_of_very_long_lines_keeps_the_lines_nearest_the_edit():
    recent = RecentEdits(radius=10, max_chars=50)
    text = "\n".join(f"{i:02d}" + "x" * 10 for i in range(30))
    recent.record(Path("/w/min.js"), text, 15)
    (chunk,) = recent.chunks()
    assert len(chunk.text) <= 50 and "15xxxx" in chunk.text
    assert chunk.text.split("\n")[0].startswith(f"{chunk.first_line:02d}")
    recent.record(Path("/w/huge.js"), "y" * 500, 0)
    assert len(recent.chunks()[0].text) == 50
    recent.record(Path("/w/generated.js"), "z\n" * MAX_DOCUMENT_CHARS, 5)
    assert recent.chunks()[0].path.name == "huge.js"  # too large a document to keep edits of


# -- similarity ----------------------------------------------------------------------------------
def test_jaccard():
    assert jaccard({"a", "b"}, {"a", "b"}) == 1.0
    assert jaccard({"a", "b"}, {"b", "c"}) == 1 / 3
    assert jaccard(set(), set()) == 0.0


def test_display_paths_are_relative_to_the_root(tmp_path):
    assert display_path(tmp_path / "src" / "a.py", tmp_path) == "src/a.py"
    assert display_path(Path("/elsewhere/b.py"), tmp_path) == "b.py"


# -- gathering -----------------------------------------------------------------------------------
LIB = {
    "lib/__init__.py": "",
    "lib/text.py": (
        "def slugify(text: str) -> str:\n    return text\n\n\n"
        "def shout(text: str) -> str:\n    return text.upper()\n"
    ),
    "lib/numbers.py": "def clamp(x: float, lo: float, hi: float) -> float:\n    return x\n",
}


def gather(root: Path, document: str, cursor_line: int, recent=None, **extra):
    return gather_context(
        root / "app.py", document, cursor_line, root, recent, cache=OutlineCache(), **extra
    )


def test_imports_used_near_the_cursor_come_first_then_recent_edits_then_the_rest(tmp_path):
    root = tree(tmp_path, LIB)
    document = (
        "from lib.numbers import clamp\n"
        "from lib.text import shout, slugify\n"
        "\n\n"
        "def title(name):\n"
        "    return slugify(name)\n"
    )
    recent = [RecentChunk(root / "lib" / "other.py", 3, 5, "def other():\n    return 42\n")]
    snippets = gather(root, document, 5, recent)
    assert [(s.kind, s.name, s.path) for s in snippets] == [
        ("import", "slugify", "lib/text.py"),
        ("recent", None, "lib/other.py"),
        ("import", "clamp", "lib/numbers.py"),
        ("import", "shout", "lib/text.py"),
    ]
    assert snippets[0].text == "def slugify(text: str) -> str:\n    ...\n"
    assert snippets[0].line == 0 and snippets[1].line == 3


def test_the_document_itself_and_what_the_model_already_sees_are_left_out(tmp_path):
    root = tree(tmp_path, LIB)
    document = "from lib.text import slugify\n\ndef slugify_all(xs):\n    return xs\n"
    seen = RecentChunk(root / "lib" / "x.py", 0, 1, "def slugify_all(xs):\n    return xs\n")
    own = RecentChunk(root / "app.py", 0, 1, "something = 'in the document itself'\n")
    snippets = gather(root, document, 3, [seen, own])
    assert [(s.kind, s.name) for s in snippets] == [("import", "slugify")]


def test_near_duplicates_are_dropped_and_the_total_is_bounded(tmp_path):
    root = tree(tmp_path, LIB)
    body = numbered(12, "value")
    chunks = [
        RecentChunk(root / "a.py", 0, 11, body),
        RecentChunk(root / "b.py", 0, 11, body.replace("value_3 = 3", "value_3 = 4")),
        RecentChunk(root / "c.py", 0, 1, "def unrelated(q):\n    return q * 2\n"),
    ]
    snippets = gather(root, "x = 1\n", 0, chunks)
    assert [s.path for s in snippets] == ["a.py", "c.py"]
    small = gather(root, "x = 1\n", 0, chunks, max_chars=len(body) + 5)
    assert [s.path for s in small] == ["a.py"]
    few = gather(root, "x = 1\n", 0, chunks, max_snippets=1)
    assert [s.path for s in few] == ["a.py"]


def test_a_document_that_is_not_python_or_script_still_gets_recent_edits(tmp_path):
    chunk = RecentChunk(tmp_path / "notes.go", 0, 0, 'func Hello() string {\n\treturn "hi"\n}\n')
    snippets = gather_context(
        tmp_path / "main.go", "package main\n", 0, tmp_path, [chunk], language="go"
    )
    assert [(s.kind, s.path) for s in snippets] == [("recent", "notes.go")]
