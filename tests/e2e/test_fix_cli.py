"""`assist fix` on the corpus of broken files, its exit codes, and crash-safe writes."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from daemon.checks.syntax import check_syntax
from daemon.protocol import DoneEvent, parse_event
from tests.e2e.test_cli import assist, port_args

CORPUS = Path(__file__).parent.parent / "data" / "broken"
LANGUAGES = {
    ".py": "python",
    ".js": "javascript",
    ".ts": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".cpp": "cpp",
}
BROKEN = sorted(p for p in CORPUS.rglob("*") if p.suffix in LANGUAGES)


def test_the_corpus_covers_eight_languages():
    assert {LANGUAGES[p.suffix] for p in BROKEN} == set(LANGUAGES.values())
    assert len(BROKEN) >= 80


@pytest.mark.parametrize("source", BROKEN, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fix_write_leaves_a_file_that_parses_or_exits_1_untouched(daemon, tmp_path, source):
    target = tmp_path / source.name
    shutil.copyfile(source, target)
    original = target.read_bytes()
    language = LANGUAGES[source.suffix]
    assert check_syntax(language, original.decode()), "the corpus file must be broken"
    out = assist("fix", str(target), "--write", *port_args(daemon))
    assert out.returncode in (0, 1), out.stderr
    if out.returncode == 0:
        assert check_syntax(language, target.read_text()) == [], out.stdout
        assert target.read_bytes() != original
    else:
        assert target.read_bytes() == original
        # Nothing verified, or two readings as likely: the author chooses.
        assert "no verified fix" in out.stderr or "choose one" in out.stderr, out.stderr


def test_fix_without_write_prints_the_diff_and_keeps_the_file(daemon, tmp_path):
    target = tmp_path / "job.py"
    target.write_text("def run(job)\n    return job.start()\n")
    out = assist("fix", str(target), *port_args(daemon))
    assert out.returncode == 0, out.stderr
    assert "+def run(job):" in out.stdout
    assert target.read_text() == "def run(job)\n    return job.start()\n"


def test_fix_write_keeps_the_file_mode(daemon, tmp_path):
    target = tmp_path / "tool.py"
    target.write_text("#!/usr/bin/env python3\nif True\n    print('x')\n")
    target.chmod(0o751)
    out = assist("fix", str(target), "--write", *port_args(daemon))
    assert out.returncode == 0, out.stderr
    assert target.stat().st_mode & 0o777 == 0o751
    assert check_syntax("python", target.read_text()) == []


def test_nothing_to_fix_exits_0(daemon, tmp_path):
    target = tmp_path / "fine.py"
    target.write_text("x = 1\n")
    out = assist("fix", str(target), "--write", *port_args(daemon))
    assert out.returncode == 0 and "nothing to fix" in out.stderr
    assert target.read_text() == "x = 1\n"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("notes.lua", b"local x = (\n", "no parser"),
        ("blob.py", b"\x00\x01binary", "binary"),
        ("latin.py", b"x = '\xe9'\n", "UTF-8"),
        ("huge.py", b"x = 1\n" * 200_000, "bytes"),
    ],
)
def test_unfixable_input_exits_2_untouched(daemon, tmp_path, name, content, message):
    target = tmp_path / name
    target.write_bytes(content)
    out = assist("fix", str(target), "--write", *port_args(daemon))
    assert out.returncode == 2, out.stderr
    assert message in out.stderr
    assert target.read_bytes() == content


def test_fix_json_prints_the_events(daemon, tmp_path):
    target = tmp_path / "j.py"
    target.write_text("for i in range(3)\n    print(i)\n")
    out = assist("fix", str(target), "--json", "--no-cache", *port_args(daemon))
    assert out.returncode == 0, out.stderr
    kinds = [line.split('"event":"', 1)[1].split('"', 1)[0] for line in out.stdout.splitlines()]
    assert kinds[0] == "start" and kinds[-1] == "done" and kinds.count("stage") >= 3


def test_fix_json_traces_each_repair_and_the_models_judgement(daemon, tmp_path):
    # Two errors; the second (a call's missing `)`) has several verified readings that only
    # the model can tell apart, so it judges them.
    target = tmp_path / "two.py"
    target.write_text(
        "def total(a, b):\n    if a = b:\n        return 0\n    return add(sub(a, b)\n\n\n"
        "print(total(1, 2))\n"
    )
    out = assist("fix", str(target), "--json", "--no-cache", *port_args(daemon))
    done = parse_event(out.stdout.splitlines()[-1])
    assert isinstance(done, DoneEvent) and done.changed, out.stderr
    assert [step.line for step in done.repairs] == [1, 3]
    assert done.repairs[0].rule == "== for = in a condition"
    judged = done.repairs[1]
    assert judged.candidates >= 2 and judged.score is not None and judged.score < 0
    offered = [done.text, *(a.text for a in done.alternatives)]
    assert all(not check_syntax("python", text) for text in offered)
    assert out.returncode == 0


def test_fix_json_through_a_pipe_closed_after_one_line_ends_quietly(daemon, tmp_path):
    """`assist fix broken.py --json | head -1`: no BrokenPipeError traceback."""
    from daemon.cli.output import EXIT_BROKEN_PIPE
    from tests.e2e.test_cli import ASSIST

    target = tmp_path / "piped.py"
    # More text than a pipe holds (64 KiB) in the events after the first: however fast the
    # daemon answers, the command cannot have written them all before the pipe was closed.
    filler = "".join(f"# line {n}: {'x' * 60}\n" for n in range(1500))
    broken = "def total(items)\n    return sum(items)\n\n" + filler
    target.write_text(broken)
    process = subprocess.Popen(
        [*ASSIST, "fix", str(target), "--json", "--no-cache", *port_args(daemon)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read().decode()
    status = process.wait(timeout=240)
    assert first.startswith(b'{"event":"start"'), first
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
    assert stderr == ""
    # The stages after the start event hold the file (more than the pipe holds): the command
    # met the closed pipe (0 would mean it wrote everything before the close).
    assert status == EXIT_BROKEN_PIPE
    assert target.read_text() == broken


WRITER = """
import sys
from pathlib import Path
from daemon.cli.source_file import write_atomically
target = Path(sys.argv[1])
old, new = sys.argv[2], sys.argv[3]
size = int(sys.argv[4])
print("ready", flush=True)
while True:
    write_atomically(target, new * size)
    write_atomically(target, old * size)
"""


def test_a_write_killed_midway_leaves_the_old_or_the_new_file(tmp_path):
    target = tmp_path / "big.py"
    size = 2_000_000
    target.write_text("a" * size)
    rng = random.Random(7)
    for _ in range(20):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(target), "a", "b", str(size)],
            stdout=subprocess.PIPE,
            env={**os.environ},
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.0, 0.08))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        content = target.read_bytes()
        assert content in (b"a" * size, b"b" * size), "a torn file"
