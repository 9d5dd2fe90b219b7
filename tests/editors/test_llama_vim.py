"""ggml-org's llama.vim (``../shared/clients/llama.vim``, used by its path) in a real headless
Neovim against a real daemon's ``/infill``, with the plugin's own defaults: its first request
(250 ms for the generation), the speculative request it sends once a suggestion is shown, its
ring buffer's warm-up, and the same request again. The suggestion is read from its ghost text.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

import pytest

from tests.e2e.conftest import RunningDaemon
from tests.e2e.documents import unique
from tests.editors.conftest import LLAMA_VIM, Neovim, NeovimRun

# An indented line in a list of the months after the first two: the answer is the next ten
# lines, much more than the first request's 250 ms write (on a machine several times faster
# than this one too), so a rest is left for the speculative request.
MAIN = (
    "# The months' names in English, for the report's headers.\nMONTHS = [\n"
    '    "January",\n    "February",\n    \n]\n\n\ndef month_name(number):\n'
    "    return MONTHS[number - 1]\n"
)
OTHER = (
    "def header(title, width=40):\n    rule = '=' * width\n"
    "    return f'{rule}\\n{title.center(width)}\\n{rule}'\n"
)


@dataclass
class Counters:
    hits: int
    joined: int
    typed: int
    warmed: int


def requests_seen(daemon: RunningDaemon, since: float) -> str:
    """The completions the daemon recorded since ``since``: how each was answered, for
    assertion messages."""
    time.sleep(0.5)  # the metrics are written in batches
    with sqlite3.connect(daemon.settings.metrics_path) as db:
        rows = db.execute(
            "SELECT at, outcome, route, finish_reason, cache_match, total_ms, tokens, stages"
            " FROM requests WHERE task = 'complete' AND at >= ? ORDER BY at",
            (since,),
        ).fetchall()
    return "\n".join(json.dumps([round(row[0] - since, 2), *row[1:]]) for row in rows)


def counters(daemon: RunningDaemon) -> Counters:
    with daemon.http() as http:
        workload: dict[str, Any] = http.get("/health").json()["workload"]
        hits = int(http.get("/v1/cache/stats").json()["session_hits"])
    return Counters(
        hits,
        int(workload["joined_flights"]),
        int(workload["typed_hits"]),
        int(workload["windows_warmed"]),
    )


@pytest.fixture(scope="module")
def llama_vim(
    neovim: Neovim, editor_daemon: RunningDaemon, tmp_path_factory: pytest.TempPathFactory
) -> tuple[NeovimRun, Counters, Counters, str]:
    if not (LLAMA_VIM / "plugin" / "llama.vim").is_file():
        pytest.fail(f"llama.vim is not at {LLAMA_VIM}")
    root = tmp_path_factory.mktemp("llama-vim")
    main, other = root / "main.py", root / "other.py"
    text = unique(MAIN)
    main.write_text(text)
    other.write_text(unique(OTHER))
    line = text.split("\n").index("    ") + 1
    before, began = counters(editor_daemon), time.time()
    run = neovim.run(
        "llama_vim.lua",
        # llama.vim's defaults, but for the endpoint and the manual trigger (its README).
        setup={
            "endpoint_fim": f"{editor_daemon.url}/infill",
            "auto_fim": False,
            "keymap_fim_trigger": "<C-F>",
        },
        files={"main": main, "other": other},
        watchdog_s=400,
        wait_ms={"answer": 120_000, "ring": 3_000, "speculative": 5_000},
        cwd=root,
        extra={"llama_vim": str(LLAMA_VIM), "line": line},
    )
    after = counters(editor_daemon)
    seen = f"{before} -> {after}\nrequests:\n{requests_seen(editor_daemon, began)}\n{run.report()}"
    return run, before, after, seen


def test_llama_vim_shows_the_daemons_suggestion_as_ghost_text(llama_vim):
    run, _, _, seen = llama_vim
    assert run.returncode == 0 and run.observations.get("ok"), seen
    first = run.observations["first"]
    assert run.observations["mode"].startswith("i")
    assert first["first"].strip(), seen
    # llama.vim's info line: the prompt and generation figures it read from the answer.
    assert " | p: " in first["info"] and " | g: " in first["info"], seen


def test_the_same_request_again_is_answered_from_the_first_ones_work(llama_vim):
    run, before, after, seen = llama_vim
    assert run.observations["again"]["first"] == run.observations["first"]["first"], seen
    # From the cache, or (on a machine so loaded that the first answer is still being written
    # in the background) by following that answer's generation.
    assert after.hits + after.joined > before.hits + before.joined, seen


def test_the_warm_up_and_the_speculative_request_are_answered_from_what_was_read(llama_vim):
    _, before, after, seen = llama_vim
    # The ring buffer's chunk: a warm-up that read its prompt in the background.
    assert after.warmed > before.warmed, seen
    # The place after the shown first line: the rest of the answer written in the background.
    assert after.typed > before.typed, seen
