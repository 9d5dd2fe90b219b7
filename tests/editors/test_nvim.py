"""The Neovim plugin (editors/nvim) in a real headless Neovim, against the real language server,
a real daemon and the real model.

One Neovim session runs ``nvim_live.lua`` (see conftest.py for how it is driven); each test
below checks one part of what it observed. ``nvim_missing_server.lua`` checks that a missing
``assist`` executable gives one clear error and nothing else, and ``nvim_no_daemon.lua`` that a
daemon that does not answer gives one warning and an "unavailable" status.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from daemon.checks.syntax import check_syntax
from tests.e2e.conftest import RunningDaemon, free_port
from tests.e2e.documents import LOAD_CONFIG, unique
from tests.editors.conftest import ASSIST, Neovim, NeovimRun

WARN, ERROR = 3, 4  # vim.log.levels

BROKEN = "import json\n\n\ndef load(path)\n    return json.load(open(path))\n"
TYPING = LOAD_CONFIG + "with open(path) as handle:\n        data = json.lo"
# A call the model finishes in several ways (range(1, rows + 1), range(0, rows), ...); where
# it is sure (after ``return`` in ``area``) no other first token is likely enough to decode.
CYCLE = "def total(rows):\n    s = 0\n    for i in range("

STAGE_MARK = re.compile(r"assist · (skeleton|logic|errors|final)( \d+ ms|: .+)")

WAIT_MS = {
    "attach": 60_000,
    "ready": 120_000,
    "answer": 120_000,
    "fix": 150_000,
    "stop": 30_000,
    "short": 10_000,
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("nvim-workspace")
    project = root / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nrequires-python = ">=3.11"\n[tool.ruff]\nline-length = 88\n'
    )
    (project / "pkg" / "loader.py").write_text(unique(LOAD_CONFIG))
    (project / "typing_here.py").write_text(unique(TYPING))
    (project / "broken.py").write_text(unique(BROKEN))
    (project / "quick_fix.py").write_text(unique(BROKEN))
    (project / "fallback_items.py").write_text(unique("x = 1\n"))
    (project / "cycle.py").write_text(unique(CYCLE))
    (project / "fallback_omnifunc.py").write_text(unique("y = 2\n"))
    other = root / "other"
    other.mkdir()
    (other / "pyproject.toml").write_text('[project]\nname = "other"\n')
    (other / "main.py").write_text(unique("print('other')\n"))
    return root


@pytest.fixture(scope="module")
def live(neovim: Neovim, editor_daemon: RunningDaemon, workspace: Path) -> NeovimRun:
    project = workspace / "project"
    run = neovim.run(
        "nvim_live.lua",
        setup={
            "cmd": [str(ASSIST), "lsp"],
            "settings": {
                "daemonUrl": editor_daemon.url,  # the test's daemon: nothing else is started
                "autostart": False,
                "debounceMs": 0,
                "maxTokens": 24,
            },
            # Keep the last stage on screen for the whole run, so that seeing it does not
            # depend on timing.
            "stage_clear_ms": 600_000,
        },
        files={
            "loader": project / "pkg" / "loader.py",
            "typing": project / "typing_here.py",
            "broken": project / "broken.py",
            "quick_fix": project / "quick_fix.py",
            "fallback_items": project / "fallback_items.py",
            "cycle": project / "cycle.py",
            "fallback_omnifunc": project / "fallback_omnifunc.py",
            "other": workspace / "other" / "main.py",
        },
        watchdog_s=420,
        wait_ms=WAIT_MS,
        extra={
            "quick_fix_line": 5,  # def load(path), below the unique first line
            "python": sys.executable,  # asks the daemon's /health whether its engine is idle
            "daemon_url": editor_daemon.url,
        },
        cwd=project,
        extra_logs={"daemon log": editor_daemon.log},
    )
    assert run.returncode == 0 and run.observations.get("ok") is True, run.report()
    return run


def observed(run: NeovimRun, key: str) -> Any:
    assert key in run.observations, run.report()
    return run.observations[key]


def test_attaches_one_client_with_inline_completion(live: NeovimRun, workspace: Path):
    attach = observed(live, "attach")
    # The nearest root marker above pkg/loader.py is the project's pyproject.toml.
    assert Path(attach["root_dir"]) == workspace / "project", live.report()
    assert attach["has_inline_provider"] is True, live.report()
    assert attach["inline_enabled"] is True, live.report()


def test_inline_completion_comes_from_the_daemon(live: NeovimRun):
    items = observed(live, "inline")["items"]
    assert len(items) >= 1, live.report()
    assert items[0]["insert_text"].strip(), live.report()
    assert items[0]["command"]["command"] == "assist.feedback", live.report()


def test_several_candidates_come_as_inline_items_and_cycle_as_ghost_text(live: NeovimRun):
    candidates = observed(live, "candidates")
    items = candidates["items"]
    assert len(items) >= 2 and len(set(items)) == len(items), live.report()
    assert all(item.strip() for item in items), live.report()
    # The ghost text showed the first item, and select() moved it to the second.
    first_lines = [item.split("\n", 1)[0] for item in items]
    assert candidates["first"] == first_lines[0], live.report()
    assert candidates["next"] == first_lines[1], live.report()


def test_ghost_text_is_shown_and_accepted(live: NeovimRun):
    ghost = observed(live, "ghost")
    assert ghost["available"] is True, (
        f"this Neovim lacks vim.lsp.inline_completion\n{live.report()}"
    )
    assert ghost["accepted"] is True, live.report()
    before, after = ghost["before"], ghost["after"]
    assert after.startswith(before) and after[len(before) :].strip(), live.report()


def test_completion_list_replaces_the_word_being_typed(live: NeovimRun):
    completion = observed(live, "completion")
    items = completion["items"]
    assert len(items) >= 1, live.report()
    assert items[0]["new_text"].startswith("lo"), live.report()
    assert items[0]["start_character"] == completion["cursor_character"] - 2, live.report()
    # Same root: the running client is reused.
    assert completion["client_id"] == observed(live, "attach")["client_id"], live.report()


def test_stages_are_rendered_as_virtual_text(live: NeovimRun):
    marks = observed(live, "stage_marks")
    assert marks, live.report()
    # "assist · logic 230 ms", or the reason of a stage that failed verification.
    assert all(STAGE_MARK.fullmatch(mark) for mark in marks), live.report()
    last = observed(live, "last_stage")
    assert last["kind"] == "complete" and last["stage"] == "final", live.report()
    if last["ok"]:
        expected = f"assist · final {int(last['elapsedMs'] + 0.5)} ms"
    else:
        expected = "assist · final: " + last["reason"].splitlines()[0][:79]  # cut at 80
    assert any(mark.startswith(expected) for mark in marks), live.report()


def test_fix_bang_applies_a_verified_fix_and_writes_the_file(live: NeovimRun, workspace: Path):
    fix = observed(live, "fix")
    result = fix["result"]
    assert result["changed"] is True and result["verified"] is True, live.report()
    assert result["written"] is True, live.report()
    assert fix["modified"] is False, live.report()
    on_disk = (workspace / "project" / "broken.py").read_text()
    assert check_syntax("python", on_disk) == [], on_disk
    assert "def load(path):" in on_disk
    assert on_disk.rstrip("\n") == fix["text"].rstrip("\n"), live.report()


def test_quick_fix_code_action_is_resolved_and_applied(live: NeovimRun):
    action = observed(live, "code_action")
    assert any(t.startswith("Fix with assist") for t in action["titles"]), live.report()
    assert check_syntax("python", action["text"]) == [], live.report()
    assert "def load(path):" in action["text"], live.report()


def test_status_is_ready(live: NeovimRun, editor_daemon: RunningDaemon):
    for key in ("status_ready", "status"):
        status = observed(live, key)
        assert status["state"] == "ready", live.report()
        assert status["daemonUrl"] == editor_daemon.url, live.report()
        assert status["model"], live.report()
    assert observed(live, "status")["lastLatencyMs"] is not None, live.report()
    assert observed(live, "statusline").startswith("assist"), live.report()
    command = observed(live, "status_command")
    assert command["message"].startswith("assist: ready"), live.report()
    assert observed(live, "status_after_stop")["state"] == "stopped", live.report()


def test_another_root_gets_its_own_client(live: NeovimRun, workspace: Path):
    other = observed(live, "other_root")
    assert Path(other["root_dir"]) == workspace / "other", live.report()
    assert other["client_id"] != observed(live, "attach")["client_id"], live.report()
    assert other["clients"] == 2, live.report()


def test_older_neovims_fall_back_to_completion_items(live: NeovimRun):
    items = observed(live, "fallback_items")
    # 0.11: vim.lsp.completion (autotrigger only when asked for) and the LSP omnifunc.
    assert items["inline_enabled"] is False, live.report()
    assert [(c["enable"], c["bufnr"], c["autotrigger"]) for c in items["enable_calls"]] == [
        (True, items["bufnr"], False)
    ], live.report()
    assert items["omnifunc"] == "v:lua.vim.lsp.omnifunc", live.report()
    # 0.8 to 0.10: the LSP omnifunc.
    omni = observed(live, "fallback_omnifunc")
    assert omni["omnifunc"] == "v:lua.vim.lsp.omnifunc", live.report()
    assert omni["enable_calls"] == 1 and omni["inline_enabled"] is False, live.report()


def test_setup_again_sends_the_settings_to_running_servers(live: NeovimRun):
    warning = observed(live, "settings_warning")
    assert warning["level"] == WARN, live.report()
    assert "LSP[assist]" in warning["message"] and "maxTokens=-3" in warning["message"]


def test_no_errors_were_shown(live: NeovimRun):
    errors = [n for n in observed(live, "notifications") if n["level"] >= ERROR]
    assert errors == [], live.report()
    assert observed(live, "errmsg") == "", live.report()


def test_a_missing_server_is_one_clear_error(neovim: Neovim, tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    (tmp_path / "a.py").write_text("a = 1\n")
    (tmp_path / "b.py").write_text("b = 2\n")
    missing = tmp_path / "no-such-dir" / "assist"
    run = neovim.run(
        "nvim_missing_server.lua",
        setup={"cmd": [str(missing), "lsp"]},
        files={"first": tmp_path / "a.py", "second": tmp_path / "b.py"},
        watchdog_s=60,
        cwd=tmp_path,
    )
    assert run.returncode == 0 and run.observations.get("ok") is True, run.report()
    obs = run.observations
    assert [o["ok"] for o in obs["opened"]] == [True, True], run.report()
    assert [o["filetype"] for o in obs["opened"]] == ["python", "python"], run.report()
    notes = obs["notifications_after_open"]
    assert len(notes) == 1, run.report()
    assert notes[0]["level"] == ERROR, run.report()
    assert str(missing) in notes[0]["message"] and "not an executable" in notes[0]["message"]
    assert obs["clients"] == 0, run.report()
    assert obs["commands"]["status_ok"] and obs["commands"]["fix_ok"], run.report()
    assert obs["status"]["state"] == "unavailable", run.report()
    assert obs["statusline"] == "assist unavailable", run.report()
    # The commands say it again (as warnings or information), never as a new error.
    errors = [n for n in obs["notifications"] if n["level"] >= ERROR]
    assert len(errors) == 1, run.report()
    assert obs["errmsg"] == "", run.report()


def test_an_unreachable_daemon_is_said_once(neovim: Neovim, tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    (tmp_path / "main.py").write_text("x = 1\n")
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    run = neovim.run(
        "nvim_no_daemon.lua",
        setup={"cmd": [str(ASSIST), "lsp"], "settings": {"daemonUrl": url, "autostart": False}},
        files={"main": tmp_path / "main.py"},
        watchdog_s=120,
        wait_ms={"attach": 60_000, "retries": 30_000, "stop": 30_000},
        cwd=tmp_path,
    )
    assert run.returncode == 0 and run.observations.get("ok") is True, run.report()
    obs = run.observations
    assert obs["unavailable_reports"] >= 2, run.report()
    notes = [n for n in obs["notifications"] if n["level"] >= WARN]
    assert len(notes) == 1, run.report()
    assert notes[0]["level"] == WARN and "daemon is unavailable" in notes[0]["message"]
    assert obs["status"]["state"] == "unavailable", run.report()
    assert obs["status"]["daemonUrl"] == url and obs["status"]["message"], run.report()
    assert obs["statusline"] == "assist unavailable", run.report()
