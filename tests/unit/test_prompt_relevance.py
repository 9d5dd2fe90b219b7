"""Which context snippets a fast-path line is shown: those whose definitions the line before the
cursor names, or whose name the word being typed begins."""

from __future__ import annotations

from daemon.prompt.relevance import defined_names, names_on_line, snippets_for_line
from daemon.protocol import ContextSnippet

PRICES = ContextSnippet(
    path="shop/prices.py",
    text="def with_tax(amount: float, rate: float = 0.2) -> float:\n    ...\n",
    kind="import",
    name="with_tax",
)
CONSOLE = ContextSnippet(
    path="rich/console.py",
    text="class Console:\n    def print(self, *objects) -> None: ...\n",
    kind="import",
)
SETTINGS = ContextSnippet(
    path="src/settings.ts",
    text="export const DEFAULT_PORT = 8080;\nexport function loadSettings(): Settings {}\n",
    kind="recent",
)
PACKAGE = ContextSnippet(path="lib/util/__init__.py", text="VERSION = '1.0'\n", kind="import")
ALL = [PRICES, CONSOLE, SETTINGS, PACKAGE]


def test_what_a_snippet_defines():
    assert defined_names(PRICES) == {"with_tax", "prices"}
    assert defined_names(CONSOLE) == {"Console", "print", "console"}
    assert defined_names(SETTINGS) == {"DEFAULT_PORT", "loadSettings", "settings"}
    assert defined_names(PACKAGE) == {"VERSION", "util"}  # a package is named by its folder


def test_the_names_of_a_line_and_the_word_being_typed():
    assert names_on_line("    total = with_tax(price") == ({"total", "with_tax", "price"}, "price")
    assert names_on_line("    return with_tax(") == ({"return", "with_tax"}, "")
    assert names_on_line("    ") == (frozenset(), "")


def test_a_call_of_an_imported_function_is_shown_its_definition():
    assert snippets_for_line(ALL, "    total = with_tax(") == [PRICES]


def test_a_module_or_a_class_named_on_the_line_brings_its_file():
    assert snippets_for_line(ALL, "    out = Console(") == [CONSOLE]
    assert snippets_for_line(ALL, "    if util.") == [PACKAGE]


def test_the_word_being_typed_brings_what_it_begins():
    assert snippets_for_line(ALL, "    port = DEF") == [SETTINGS]
    assert snippets_for_line(ALL, "    x = wi") == []  # two letters begin too much to mean it


def test_a_line_that_names_nothing_of_the_context_is_shown_none():
    assert snippets_for_line(ALL, "") == []
    assert snippets_for_line(ALL, "        ") == []
    assert snippets_for_line(ALL, "    self.show_path = ") == []


def test_the_request_order_is_kept():
    line = "    port = DEFAULT_PORT if with_tax("
    assert snippets_for_line([SETTINGS, PRICES], line) == [SETTINGS, PRICES]
    assert snippets_for_line([PRICES, SETTINGS], line) == [PRICES, SETTINGS]
