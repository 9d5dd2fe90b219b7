"""ggml-org's llama.vim (``../shared/clients/llama.vim``, used by its path) in a real headless
Neovim against a real daemon's ``/infill``, with the plugin's own defaults: its first request
(250 ms for the generation), the speculative request it sends once a suggestion is shown, its
ring buffer's warm-up, and the same request again. The suggestion is read from its ghost text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.e2e.conftest import RunningDaemon
from tests.e2e.documents import unique
from tests.editors.conftest import LLAMA_VIM, Neovim, NeovimRun

# An indented line at the end of a loop's body: the answer is the block's next lines, more
# than the first request's 250 ms write on this machine.
MAIN = (
    "import os\n\n\ndef sizes(root):\n    total = 0\n    for name in os.listdir(root):\n"
    "        path = os.path.join(root, name)\n        \n\n\nprint(sizes('.'))\n"
)
OTHER = (
    "def size_of(path):\n    with open(path, 'rb') as handle:\n        return len(handle.read())\n"
)


@dataclass
class Counters:
    hits: int
    typed: int
    warmed: int


def counters(daemon: RunningDaemon) -> Counters:
    with daemon.http() as http:
        workload: dict[str, Any] = http.get("/health").json()["workload"]
        hits = int(http.get("/v1/cache/stats").json()["session_hits"])
    return Counters(hits, int(workload["typed_hits"]), int(workload["windows_warmed"]))


@pytest.fixture(scope="module")
def llama_vim(
    neovim: Neovim, editor_daemon: RunningDaemon, tmp_path_factory: pytest.TempPathFactory
) -> tuple[NeovimRun, Counters, Counters]:
    if not (LLAMA_VIM / "plugin" / "llama.vim").is_file():
        pytest.fail(f"llama.vim is not at {LLAMA_VIM}")
    root = tmp_path_factory.mktemp("llama-vim")
    main, other = root / "main.py", root / "other.py"
    text = unique(MAIN)
    main.write_text(text)
    other.write_text(unique(OTHER))
    line = text.split("\n").index("        ") + 1
    before = counters(editor_daemon)
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
    return run, before, counters(editor_daemon)


def test_llama_vim_shows_the_daemons_suggestion_as_ghost_text(llama_vim):
    run, _, _ = llama_vim
    assert run.returncode == 0 and run.observations.get("ok"), run.report()
    first = run.observations["first"]
    assert run.observations["mode"].startswith("i")
    assert first["first"].strip(), run.report()
    # llama.vim's info line: the prompt and generation figures it read from the answer.
    assert " | p: " in first["info"] and " | g: " in first["info"], first["info"]


def test_the_same_request_again_is_the_cached_answer(llama_vim):
    run, before, after = llama_vim
    assert run.observations["again"]["first"] == run.observations["first"]["first"]
    assert after.hits > before.hits, (before, after)


def test_the_warm_up_and_the_speculative_request_are_answered_from_what_was_read(llama_vim):
    _, before, after = llama_vim
    # The ring buffer's chunk: a warm-up that read its prompt in the background.
    assert after.warmed > before.warmed, (before, after)
    # The place after the shown first line: the rest of the answer written in the background.
    assert after.typed > before.typed, (before, after)
