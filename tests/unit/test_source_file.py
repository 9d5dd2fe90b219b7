"""Input files: text is read, everything else is refused with a clear reason."""

from __future__ import annotations

import pytest

from daemon.source_file import InputError, read_source


def test_reads_utf8_text(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("print('héllo')\n", encoding="utf-8")
    assert read_source(path) == "print('héllo')\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
        (b"x = 1\ny = '\xff\xfe'\n", "not valid UTF-8 .byte 11, line 2"),
    ],
)
def test_refuses_binary_and_invalid_utf8(tmp_path, content, message):
    path = tmp_path / "f"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_source(path)


def test_refuses_huge_missing_and_directories(tmp_path):
    big = tmp_path / "big.py"
    big.write_text("x" * 2000)
    with pytest.raises(InputError, match="2000 bytes"):
        read_source(big, max_bytes=1000)
    with pytest.raises(InputError, match="does not exist"):
        read_source(tmp_path / "absent.py")
    with pytest.raises(InputError, match="directory"):
        read_source(tmp_path)
