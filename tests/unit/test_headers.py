"""The check that finds an answer leaving the deeper code below it without its header."""

from __future__ import annotations

import pytest

from daemon.checks.headers import leaves_header_out
from daemon.cursor import Cursor

# anyio's socket stream with its `with self._send_guard:` line removed: the line's body is
# below the cursor, deeper than it.
HEADLESS = (
    "class Stream:\n"
    "    async def send(self, item):\n"
    "        await checkpoint()\n"
    "        \n"
    "            view = memoryview(item)\n"
    "            # written whole\n"
    "            self.write(view)\n"
    "\n"
    "    def close(self):\n"
    "        pass\n"
)


def leaves(text: str, line: int, inserted: str) -> bool:
    cursor = Cursor.locate(text, line, len(text.split("\n")[line]))
    return leaves_header_out(cursor, inserted)


@pytest.mark.parametrize(
    "inserted",
    [
        "loop.add_reader(self.socket, self.send)",
        "await checkpoint()",  # the line above again
        "x = 1\ny = 2",
        "# take the guard",
    ],
)
def test_an_answer_that_opens_no_block_leaves_the_code_below_headless(inserted):
    assert leaves(HEADLESS, 3, inserted)


@pytest.mark.parametrize(
    "inserted",
    [
        "with self._send_guard:",
        "if item:",
        "x = 1\nwhile item:",  # its last line opens the block
        "self.write(  # the call goes on below",  # the code below continues its bracket
    ],
)
def test_an_answer_that_opens_the_block_mends_it(inserted):
    assert not leaves(HEADLESS, 3, inserted)


def test_code_below_that_parses_is_no_hole():
    text = "def f():\n    if x:\n    \n        y = 1\n"  # the block's header is above
    assert not leaves(text, 2, "z = 2")
    # Code below at the cursor's own indentation, or less: no header is missing.
    text = "def f():\n    x = 1\n    \n    y = 2\n"
    assert not leaves(text, 2, "z = 2")


def test_only_on_an_empty_line():
    text = "def f():\n    x = 1\n    print(\n        y = 2\n"
    cursor = Cursor.locate(text, 2, len("    print("))
    assert not leaves_header_out(cursor, "1)")
