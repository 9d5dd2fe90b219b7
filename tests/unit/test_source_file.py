"""Input files: text is read, everything else is refused with a clear reason."""

from __future__ import annotations

import pytest

from daemon.cli.source_file import FileTooLarge, InputError, describe_size, read_source


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
    with pytest.raises(FileTooLarge, match="2,000 bytes; files over 1,000 bytes") as refused:
        read_source(big, max_bytes=1000)
    assert (refused.value.path, refused.value.size, refused.value.limit) == (big, 2000, 1000)
    with pytest.raises(InputError, match="does not exist"):
        read_source(tmp_path / "absent.py")
    with pytest.raises(InputError, match="directory"):
        read_source(tmp_path)


def test_a_file_over_the_limit_is_not_read(tmp_path, monkeypatch):
    big = tmp_path / "big.py"
    big.write_text("x" * 5000)

    def no_reading(*_args, **_kwargs):
        raise AssertionError("a file over the limit was opened")

    monkeypatch.setattr(type(big), "open", no_reading)
    with pytest.raises(FileTooLarge):
        read_source(big, max_bytes=1000)


def test_sizes_are_exact_and_readable():
    assert describe_size(999) == "999 bytes"
    assert describe_size(50 * 2**20) == "52,428,800 bytes (50.0 MiB)"
