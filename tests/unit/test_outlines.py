"""Outlines of Python and TypeScript modules, against their expected text: what an imported
name looks like to the model."""

from __future__ import annotations

from daemon.workspace.python_outline import MAX_DEFINITION_CHARS, MAX_DOC_LINES, outline_python
from daemon.workspace.script_outline import outline_script

PYTHON = '''"""Functions for text."""
import os
from .core import Thing as Thing2, other
__all__ = ["slugify", "Store", "LIMIT", "Thing2"]
LIMIT: int = 10
BIG = {
  "a": 1,
  "b": 2,
  "c": 3,
  "d": 4,
}

@cache
def slugify(text: str,
            sep: str = "-") -> str:
    """Lower-case ``text``, join words with ``sep``."""
    # a comment in the body
    return sep.join(text.lower().split())

async def fetch(url, *, timeout=lambda: 3): return url

class Store(Base, metaclass=Meta):
    """A store.

    Holds things.
    """
    name: str
    count: int = 0
    def __init__(self, name: str) -> None:
        """Make one.

        More about it.
        """
        self.name = name
    @property
    def size(self) -> int:
        return 1
    def _private(self): pass
    class Inner: pass
'''


def test_python_functions_keep_their_header_as_written_and_docstring():
    outline = outline_python(PYTHON)
    assert outline.definitions["slugify"].text == (
        "@cache\n"
        "def slugify(text: str,\n"
        '            sep: str = "-") -> str:\n'
        '    """Lower-case ``text``, join words with ``sep``."""\n'
        "    ...\n"
    )
    assert outline.definitions["slugify"].line == 12  # its decorator, 0-based
    assert outline.definitions["fetch"].text == (
        "async def fetch(url, *, timeout=lambda: 3):\n    ...\n"
    )


def test_python_classes_show_fields_and_public_method_headers():
    assert outline_python(PYTHON).definitions["Store"].text == (
        "class Store(Base, metaclass=Meta):\n"
        '    """A store."""\n'  # a class's docstring: its first paragraph
        "    name: str\n"
        "    count: int = 0\n"
        "    def __init__(self, name: str) -> None:\n"
        '        """Make one."""\n'
        "        ...\n"
        "    @property\n"
        "    def size(self) -> int:\n"
        "        ...\n"
        "    class Inner:\n"
        "        ...\n"
    )


def test_python_a_class_with_many_fields_keeps_its_methods_first():
    values = "".join(f"    V{i} = {i}, 'value number {i}'\n" for i in range(200))
    source = (
        "class Codes(IntEnum):\n"
        f"{values}"
        "    @classmethod\n"
        "    def is_error(cls, value: int) -> bool:\n"
        '        """Whether ``value`` is an error."""\n'
        "        return value >= 400\n"
    )
    text = outline_python(source).definitions["Codes"].text
    assert len(text) <= MAX_DEFINITION_CHARS + 100
    assert text.startswith("class Codes(IntEnum):\n    V0 = 0, 'value number 0'\n")
    assert (
        "    @classmethod\n    def is_error(cls, value: int) -> bool:\n"
        '        """Whether ``value`` is an error."""\n        ...\n'
    ) in text
    assert "V199" not in text and text.endswith("    ...\n")


def test_python_constants_reexports_and_the_module_summary():
    outline = outline_python(PYTHON)
    assert outline.definitions["LIMIT"].text == "LIMIT: int = 10\n"
    assert outline.definitions["BIG"].text == "BIG = ...\n"
    assert outline.exported == ["slugify", "Store", "LIMIT", "Thing2"]
    thing = outline.reexports["Thing2"]
    assert (thing.module, thing.level, thing.name) == ("core", 1, "Thing")
    assert outline.summary() == (
        '"""Functions for text."""\n'
        "LIMIT: int = 10\n"
        "@cache\n"
        "def slugify(text: str,\n"
        '            sep: str = "-") -> str:\n'
        "    ...\n"
        "class Store(Base, metaclass=Meta):\n"
        "    def __init__(self, name: str) -> None:\n"
        "        ...\n"
        "    @property\n"
        "    def size(self) -> int:\n"
        "        ...\n"
    )


def test_python_module_that_does_not_parse_keeps_what_does():
    source = (
        "def good(a: int) -> int:\n    return a\n\n"
        "def bad(:\n    pass\n\n"
        "try:\n    import fast\nexcept ImportError:\n    fast = None\n\n"
        "class Later:\n    def go(self):\n        pass\n"
    )
    outline = outline_python(source)
    assert set(outline.definitions) == {"good", "Later", "fast"}
    assert outline.definitions["Later"].text == ("class Later:\n    def go(self):\n        ...\n")


def test_python_long_docstrings_are_cut():
    doc = "\n".join(f"    line {i}" for i in range(40))
    outline = outline_python(f'def f():\n    """Summary.\n{doc}\n    """\n')
    text = outline.definitions["f"].text
    assert text.count("\n") <= MAX_DOC_LINES + 4 and "line 0" in text and "line 39" not in text
    assert text.rstrip().endswith("...")


TYPESCRIPT = """import D, { a as b } from "./d";
/**
 * Makes a slug.
 */
export function slugify(text: string, sep = "-"): string {
  return text;
}
export const add = (a: number, b: number): number => a + b;
export const mul = (a: number, b: number): number => {
  return a * b;
};
export interface User { name: string; age?: number }
export default class Store<T> extends Base implements I {
  private items: T[] = [];
  #secret = 1;
  count = 0;
  constructor(public name: string) { super(); }
  get(id: Id): T | undefined { return undefined; }
  static make(): Store<number> { return new Store("x"); }
}
function inner(x: number) { return x; }
export { inner as help };
export * from "./all";
function broken( {
"""


def test_typescript_exports_show_headers_without_bodies():
    outline = outline_script(TYPESCRIPT, "typescript")
    exports = {name: d.text for name, d in outline.exports.items()}
    assert exports["slugify"] == (
        '/**\n * Makes a slug.\n */\nexport function slugify(text: string, sep = "-"): string;\n'
    )
    assert exports["add"] == "export const add = (a: number, b: number): number => a + b;\n"
    assert exports["mul"] == "export const mul = (a: number, b: number): number => { ... };\n"
    assert exports["User"] == "export interface User { name: string; age?: number }\n"
    assert exports["help"] == "function inner(x: number);\n"
    assert (
        exports["default"]
        == exports["Store"]
        == (
            "export default class Store<T> extends Base implements I {\n"
            "  count = 0;\n"
            "  constructor(public name: string);\n"
            "  get(id: Id): T | undefined;\n"
            "  static make(): Store<number>;\n"
            "}\n"
        )
    )
    assert outline.reexports == [("./all", None)]
    assert [(i.specifier, i.names) for i in outline.imports] == [
        ("./d", {"D": "default", "b": "a"})
    ]


HIERARCHY = '''class Base(Exception):
    def __init__(self, message: str, code: int = 0) -> None:
        self.message = message

class Middle(Base):
    """Between."""

class Leaf(Middle):
    pass

class Own(Base):
    def __init__(self, ctx) -> None:
        pass

@dataclass
class Record(Base):
    field: int

class Made(Base):
    def __new__(cls, value):
        return super().__new__(cls)

class UnderMade(Made):
    pass

class Outside(ValueError):
    pass

class Both(Outside, Base):
    pass
'''


def test_python_a_class_shows_the_constructor_it_inherits_from_a_base_of_its_module():
    definitions = outline_python(HIERARCHY).definitions
    inherited = (
        "    # __init__ inherited from Base\n"
        "    def __init__(self, message: str, code: int = 0) -> None:\n"
        "        ...\n"
    )
    assert definitions["Middle"].text == 'class Middle(Base):\n    """Between."""\n' + inherited
    assert definitions["Leaf"].text == "class Leaf(Middle):\n" + inherited  # two bases up
    assert "inherited" not in definitions["Own"].text  # its own constructor
    assert "inherited" not in definitions["Record"].text  # a decorator may write one
    assert "inherited" not in definitions["Made"].text  # __new__ decides
    assert "inherited" not in definitions["UnderMade"].text
    # The first base is not of this module: what it takes is unknown, so nothing is shown.
    assert "inherited" not in definitions["Outside"].text
    assert "inherited" not in definitions["Both"].text


def test_python_an_inherited_constructor_is_found_in_a_module_that_does_not_parse():
    source = HIERARCHY + "\ndef broken(:\n    pass\n"
    assert "# __init__ inherited from Base" in outline_python(source).definitions["Leaf"].text
