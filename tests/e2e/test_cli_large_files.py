"""`assist complete` in a 50 MB file gets its completion from a real daemon: only a window
around the cursor is sent, well under the daemon's request size limit."""

from __future__ import annotations

from pathlib import Path

from daemon.protocol import DoneEvent, StartEvent, parse_event
from tests.e2e.test_cli import assist, port_args
from tests.unit.test_cli_large_files import SIZE, write_large_module


def test_complete_in_a_50_mb_file(daemon, tmp_path: Path):
    path = tmp_path / "generated.py"
    lines = write_large_module(path)
    assert path.stat().st_size == SIZE > daemon.settings.max_request_bytes
    # The cursor after `return ` in a function near the middle of the file.
    line = next(n for n in range(len(lines) // 2, len(lines)) if lines[n].startswith("    return"))
    lines_before = lines[: line + 1]
    path.write_text("\n".join([*lines_before[:-1], "    return ", *lines[line + 1 :]]))
    position = ["--line", str(line + 1), "--column", "12"]

    out = assist("complete", str(path), *position, "--json", "--no-cache", *port_args(daemon))
    assert out.returncode == 0, out.stderr
    events = [parse_event(text) for text in out.stdout.splitlines()]
    assert isinstance(events[0], StartEvent) and events[0].language == "python"
    assert isinstance(events[-1], DoneEvent)

    shown = assist("complete", str(path), *position, *port_args(daemon))
    assert shown.returncode == 0, shown.stderr
    assert "ms" in shown.stderr.splitlines()[-1]
