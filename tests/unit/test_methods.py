"""Python methods written without their instance: the check that finds ``def name()`` in a
class body, and what it leaves alone."""

from __future__ import annotations

import pytest

from daemon.checks.methods import missing_instance
from daemon.cursor import Cursor


def missing(prefix: str, inserted: str) -> bool:
    """The check with the cursor at the end of ``prefix``."""
    lines = prefix.split("\n")
    return missing_instance(Cursor.locate(prefix, len(lines) - 1, len(lines[-1])), inserted)


CLASS = "class Box:\n    size = 3\n\n    def __init__(self):\n        self.items = []\n\n"


@pytest.mark.parametrize(
    ("prefix", "inserted"),
    [
        (CLASS + "    def close(", ") -> None:"),  # after the bracket
        (CLASS + "    def clo", "se():"),  # inside the name
        (CLASS + "    ", "def close():"),  # on a new line
        (CLASS + "    async def close(", "):"),
        (CLASS + "    @property\n    def size(", ") -> int:"),
        (CLASS + "    # closes it\n\n    def close(", "  ):\n        pass"),
        ("class Tabbed:\n\tdef close(", "):"),
    ],
)
def test_a_method_with_an_empty_parameter_list_is_missing_its_instance(prefix, inserted):
    assert missing(prefix, inserted)


@pytest.mark.parametrize(
    ("prefix", "inserted"),
    [
        (CLASS + "    def close(", "self) -> None:"),
        (CLASS + "    @staticmethod\n    def make(", ") -> 'Box':"),
        (CLASS + "    @builtins.staticmethod\n    def make(", "):"),
        (CLASS + "    def outer(self):\n        def inner(", "):"),  # a nested function
        ("def top(", ") -> None:"),  # at module level
        ("if True:\n    def indented(", "):"),  # in a block, not a class
        (CLASS + "    def close(", "self,"),  # the list goes on
        (CLASS + "    x = f(", ")"),  # a call, not a definition
    ],
)
def test_other_definitions_and_lines_are_left_alone(prefix, inserted):
    assert not missing(prefix, inserted)


def test_a_static_method_decorator_counts_only_right_above_the_definition():
    prefix = CLASS + "    @staticmethod\n    def make():\n        return 1\n\n    def close("
    assert missing(prefix, ")")


def test_a_long_class_is_walked_line_by_line_up_to_its_header():
    body = "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(500))
    assert missing("class Big:\n" + body + "    def last(", "):")
