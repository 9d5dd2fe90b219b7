"""What a document imports from its workspace: Python's and TypeScript's import rules on real
files in a temporary workspace, files outside the root refused, broken files tolerated, and
outlines cached by (path, mtime, size)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from daemon.workspace.imports import (
    MAX_FILE_BYTES,
    OutlineCache,
    imported_definitions,
    python_import_statements,
    read_jsonc,
)


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def found(document: Path, root: Path, text: str | None = None, **extra):
    text = document.read_text() if text is None else text
    items = imported_definitions(document, text, root, cache=OutlineCache(), **extra)
    return {(item.file.relative_to(root.resolve()).as_posix(), item.name): item for item in items}


TEXTS = '''"""Text functions."""


def slugify(text: str, sep: str = "-") -> str:
    """Lower-case ``text`` and join its words with ``sep``."""
    return sep.join(text.lower().split())


def _private():
    pass
'''


def test_python_absolute_import_of_a_sibling_module(tmp_path):
    root = tree(tmp_path, {"texts.py": TEXTS, "app.py": "from texts import slugify\n"})
    items = found(root / "app.py", root)
    item = items[("texts.py", "slugify")]
    assert item.text.startswith('def slugify(text: str, sep: str = "-") -> str:\n')
    assert '"""Lower-case ``text`` and join its words with ``sep``."""' in item.text
    assert item.line == 3 and item.alias == "slugify"


def test_python_src_layout_and_packages(tmp_path):
    root = tree(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname='shop'\n",
            "src/shop/__init__.py": "",
            "src/shop/money.py": "CENTS = 100\n\nclass Price:\n    amount: int\n",
            "src/shop/cart.py": "import shop.money\nfrom shop.money import Price as P\n",
        },
    )
    items = found(root / "src/shop/cart.py", root)
    assert items[("src/shop/money.py", "Price")].alias == "P"
    summary = items[("src/shop/money.py", None)]
    assert summary.alias == "shop.money"
    assert "CENTS = 100" in summary.text and "class Price:" in summary.text


def test_python_relative_imports(tmp_path):
    root = tree(
        tmp_path,
        {
            "pkg/__init__.py": "from .core import Engine\n",
            "pkg/core.py": "class Engine:\n    def run(self, steps: int) -> None:\n        pass\n",
            "pkg/util.py": "def clamp(x, lo, hi):\n    return x\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/job.py": (
                "from .. import util\nfrom ..core import Engine\nfrom . import missing\n"
                "from pkg import Engine as Again\n"
            ),
        },
    )
    items = found(root / "pkg/sub/job.py", root)
    assert "def clamp(x, lo, hi):" in items[("pkg/util.py", None)].text
    engine = items[("pkg/core.py", "Engine")]
    assert "def run(self, steps: int) -> None:" in engine.text
    # The package re-exports Engine from .core: followed to where it is defined.
    assert any(k == ("pkg/core.py", "Engine") and v.alias == "Again" for k, v in items.items())
    assert not any(name == "missing" for _, name in items)


def test_python_import_of_a_dotted_module_and_a_submodule_by_name(tmp_path):
    root = tree(
        tmp_path,
        {
            ".git/HEAD": "",
            "a/__init__.py": "",
            "a/b.py": "def f(x):\n    return x\n",
            "main.py": "import a.b\nfrom a import b as bee\n",
        },
    )
    items = imported_definitions(root / "main.py", "import a.b\nfrom a import b as bee\n", root)
    assert [(i.alias, i.name) for i in items] == [("a.b", None), ("bee", None)]
    assert all("def f(x):" in i.text for i in items)


def test_files_outside_the_root_are_refused(tmp_path):
    tree(tmp_path, {"secret.py": "def leak():\n    pass\n"})
    root = tree(tmp_path / "ws", {"inside.py": "def fine():\n    pass\n"})
    (root / "linked.py").symlink_to(tmp_path / "secret.py")
    text = (
        "from ..secret import leak\n"  # the directory above the workspace
        "from linked import leak\n"  # a link inside that leads outside
        "import linked\n"
        "from inside import fine\n"
    )
    assert set(found(root / "app.py", root, text)) == {("inside.py", "fine")}


def test_the_document_itself_is_not_its_own_context(tmp_path):
    root = tree(tmp_path, {"app.py": "from app import main\n\ndef main():\n    pass\n"})
    assert found(root / "app.py", root) == {}


def test_syntax_errors_are_tolerated_in_the_document_and_the_imported_file(tmp_path):
    broken = TEXTS + "\ndef unfinished(:\n    pass\n\n\ndef later(x: int) -> int:\n    return x\n"
    root = tree(tmp_path, {"texts.py": broken})
    document = "from texts import slugify, later\n\ndef g():\n    return slugify(\n"
    items = found(root / "app.py", root, document)
    assert "def slugify(text: str" in items[("texts.py", "slugify")].text
    assert "def later(x: int) -> int:" in items[("texts.py", "later")].text


def test_import_statements_are_found_without_parsing_the_whole_document():
    text = (
        "import os, sys as system\n"
        "from x.y import (\n    a,\n    b as c,\n)\n"
        "def f(:\n"
        "    from .rel import z\n"
        '"""\nfrom the docs, a sentence\n"""\n'
        "import q; x = (\n"
    )
    statements = python_import_statements(text)
    seen = [
        (getattr(s, "module", None), getattr(s, "level", 0), [(a.name, a.asname) for a in s.names])
        for s in statements
    ]
    assert seen == [
        (None, 0, [("os", None), ("sys", "system")]),
        ("x.y", 0, [("a", None), ("b", "c")]),
        ("rel", 1, [("z", None)]),
        (None, 0, [("q", None)]),
    ]


def test_huge_and_binary_files_are_skipped(tmp_path):
    root = tree(tmp_path, {"small.py": "def ok():\n    pass\n"})
    (root / "big.py").write_text("def big():\n    pass\n" + "#" * (MAX_FILE_BYTES + 1))
    (root / "blob.py").write_bytes(b"def blob():\n    pass\n\x00\x01")
    text = "from big import big\nfrom blob import blob\nfrom small import ok\n"
    assert set(found(root / "app.py", root, text)) == {("small.py", "ok")}


def test_outlines_are_cached_by_mtime_and_size(tmp_path):
    root = tree(tmp_path, {"texts.py": TEXTS})
    cache = OutlineCache()
    text = "from texts import slugify\n"
    for _ in range(3):
        imported_definitions(root / "app.py", text, root, cache=cache)
    assert cache.parsed == 1
    texts = root / "texts.py"
    texts.write_text(TEXTS.replace("slugify(text: str", "slugify(text: bytes"))
    stat = texts.stat()
    os.utime(texts, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    (item,) = imported_definitions(root / "app.py", text, root, cache=cache)
    assert cache.parsed == 2 and "text: bytes" in item.text


TS_FILES = {
    "src/util/strings.ts": (
        "/** Makes a slug. */\n"
        "export function slugify(text: string, sep = '-'): string {\n  return text;\n}\n"
        "export const LIMIT = 10;\n"
    ),
    "src/util/index.ts": "export * from './strings';\nexport { Store as Shop } from '../store';\n",
    "src/store.tsx": (
        "export default class Store<T> {\n  get(id: string): T | undefined { return; }\n}\n"
    ),
    "src/legacy.js": "function old(a, b) { return a; }\nmodule.exports = { old };\n",
    "src/esm.ts": "export interface Options { verbose?: boolean }\n",
}


def test_typescript_relative_imports_extensions_and_index_files(tmp_path):
    root = tree(tmp_path, TS_FILES)
    text = (
        "import { slugify, LIMIT as MAX } from './util';\n"
        "import Store from './store';\n"
        "import { Shop } from './util/index';\n"
        "import type { Options } from './esm.js';\n"
        "const { old } = require('./legacy');\n"
        "import * as strings from './util/strings';\n"
        "import React from 'react';\n"
    )
    items = found(root / "src/app.ts", root, text)
    slug = items[("src/util/strings.ts", "slugify")]
    assert slug.text == (
        "/** Makes a slug. */\nexport function slugify(text: string, sep = '-'): string;\n"
    )
    assert items[("src/util/strings.ts", "LIMIT")].alias == "MAX"
    store = items[("src/store.tsx", "default")]
    assert "get(id: string): T | undefined;" in store.text and store.alias == "Store"
    # Re-exported by the index as Shop: followed to the file that defines it.
    assert "class Store<T>" in items[("src/store.tsx", "Shop")].text
    assert "interface Options" in items[("src/esm.ts", "Options")].text
    assert items[("src/legacy.js", "old")].text == "function old(a, b);\n"
    assert "export const LIMIT = 10;" in items[("src/util/strings.ts", None)].text
    assert not any("react" in path for path, _ in items)


def test_tsconfig_paths_and_base_url(tmp_path):
    root = tree(
        tmp_path,
        {
            **TS_FILES,
            "tsconfig.json": (
                "{\n  // comments and trailing commas, as tsconfig allows\n"
                '  "compilerOptions": {\n    "baseUrl": "./src",\n'
                '    "paths": { "@util/*": ["util/*"], },\n  },\n}\n'
            ),
        },
    )
    text = "import { slugify } from '@util/strings';\nimport Store from 'store';\n"
    items = found(root / "src/deep/app.ts", root, text)
    assert set(items) == {("src/util/strings.ts", "slugify"), ("src/store.tsx", "default")}


def test_jsonc_keeps_comment_markers_inside_strings():
    assert read_jsonc('{"paths": {"@/*": ["./src/*"]}, /* c */ "a": "//x",}') == {
        "paths": {"@/*": ["./src/*"]},
        "a": "//x",
    }


@pytest.mark.parametrize("language", ["go", "markdown"])
def test_other_languages_have_no_imports_yet(tmp_path, language):
    assert imported_definitions(tmp_path / "x.go", 'import "fmt"\n', tmp_path, language) == []
