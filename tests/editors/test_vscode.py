"""The VS Code extension inside a real VS Code: code-server, driven by headless Chromium.

code-server (VS Code served to a browser, installed from the npm registry by
``make codeserver``) gets the freshly packaged ``.vsix`` (``make vscode``) in extension and
user-data folders of the test's own, and opens a Python project; a real daemon on the
embedded model answers. ``vscode/drive.mjs`` (playwright-core, Debian's Chromium) then does
what a programmer does: types a signature and a docstring and accepts the ghost text with
Tab, cycles a statement's ghost text to its next candidate with Alt+], reads the status bar,
applies "Fix with assist" from the quick fixes, runs "Assist: Fix
File" from the command palette, and watches the daemon stop and come back. A screenshot of
every step is saved in the test's temp folder. The files it saved are checked on disk.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from daemon.client.launcher import daemon_env, free_port
from tests.e2e.conftest import RunningDaemon, start_daemon

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VSIX = REPO / "editors" / "vscode" / "assist-0.1.0.vsix"
CODE_SERVER_VERSION = "4.99.4"
CODE_SERVER_DIR = Path.home() / ".cache" / "assist" / f"code-server-{CODE_SERVER_VERSION}"
CODE_SERVER = CODE_SERVER_DIR / "node_modules" / ".bin" / "code-server"
PLAYWRIGHT = CODE_SERVER_DIR / "node_modules" / "playwright-core" / "index.mjs"
ASSIST = Path(sys.executable).parent / "assist"

TYPED = (
    "def circle_area(radius: float) -> float:\n"
    '"""Return the area of a circle of the given radius."""\n'
)
QUICK_FIX = "def area(width, height)\n    return width * height\n\n\nprint(area(2, 3))\n"
FIX_COMMAND = (
    "import os\n\n\ndef files(root):\n    return sorted(os.listdir(root)\n\n\nprint(files('.'))\n"
)


def require(path: Path, how: str) -> None:
    if not path.exists():
        pytest.fail(f"{path} is missing: {how}")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "shapes"
    folder.mkdir()
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "shapes"\nversion = "0.1.0"\nrequires-python = ">=3.11"\n'
    )
    (folder / "shapes.py").write_text("import math\n\n\n")
    (folder / "area.py").write_text(QUICK_FIX)
    (folder / "listing.py").write_text(FIX_COMMAND)
    # An assignment the model is unsure how to finish (candidates branch only where it is:
    # f"Hello, {name}!", f"Hello, {name}! How are you?", "Hello, " + name + "!", ...).
    (folder / "cycle.py").write_text("def greet(name):\n")
    return folder


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[RunningDaemon]:
    running = start_daemon(tmp_path / "daemon")
    yield running
    running.stop()


@pytest.fixture
def code_server(tmp_path: Path, workspace: Path, daemon: RunningDaemon) -> Iterator[str]:
    """code-server with the packaged extension, on a loopback port, auth off."""
    require(CODE_SERVER, "run `make codeserver` (tests/editors/vscode/install_code_server.sh)")
    require(VSIX, "run `make vscode` to package the extension")
    extensions, data = tmp_path / "extensions", tmp_path / "user-data"
    (data / "User").mkdir(parents=True)
    (data / "User" / "settings.json").write_text(
        json.dumps(
            {
                "assist.serverPath": str(ASSIST),
                "assist.daemonUrl": daemon.url,
                "assist.autostart": False,
                "workbench.startupEditor": "none",
                "security.workspace.trust.enabled": False,
                "telemetry.telemetryLevel": "off",
                "workbench.tips.enabled": False,
                "extensions.ignoreRecommendations": True,
                "update.mode": "none",
                "files.autoSave": "off",
                "editor.inlineSuggest.enabled": True,
            }
        )
    )
    common = ["--extensions-dir", str(extensions), "--user-data-dir", str(data)]
    installed = subprocess.run(
        [str(CODE_SERVER), *common, "--install-extension", str(VSIX)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    port = free_port()
    log = tmp_path / "code-server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                str(CODE_SERVER),
                *common,
                "--auth",
                "none",
                "--bind-addr",
                f"127.0.0.1:{port}",
                "--disable-telemetry",
                "--disable-update-check",
                "--disable-workspace-trust",
                str(workspace),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(url, timeout=2, trust_env=False).status_code < 500:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, f"code-server did not answer: {log.read_text()}"
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


def drive(tmp_path: Path, config: dict[str, Any]) -> dict[str, Any]:
    node = shutil.which("node")
    assert node, "Node.js is needed to drive the browser"
    path = tmp_path / "drive.json"
    path.write_text(json.dumps(config))
    run = subprocess.run(
        [node, str(HERE / "vscode" / "drive.mjs"), str(path)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    try:
        results = json.loads(Path(config["results"]).read_text())
    except (OSError, ValueError):
        results = {"steps": []}
    results["output"] = (run.stdout + run.stderr)[-4000:]
    results["returncode"] = run.returncode
    return results


def test_the_extension_in_a_real_vs_code(tmp_path, workspace, daemon, code_server):
    shots = tmp_path / "screenshots"
    shots.mkdir()
    config = {
        "url": code_server,
        "workspace": str(workspace),
        "chromium": shutil.which("chromium") or "/usr/bin/chromium",
        "playwright": str(PLAYWRIGHT),
        "shots": str(shots),
        "results": str(tmp_path / "results.json"),
        "completion": {"file": "shapes.py", "typed": TYPED},
        "cycle": {"file": "cycle.py", "typed": "    message = "},
        "quickFix": {"file": "area.py", "expect": "def area(width, height):"},
        "fixCommand": {"file": "listing.py", "expect": "sorted(os.listdir(root))"},
        "daemon": {
            "pid": daemon.process.pid,
            "restart": [sys.executable, "-P", "-m", "daemon.cli", "serve"],
            "env": daemon_env(daemon.settings),
            "cwd": str(daemon.settings.cache_dir),
        },
    }
    results = drive(tmp_path, config)
    restarted = results.get("restartedPid")
    try:
        steps = {step["name"]: step for step in results["steps"]}
        failed = [s for s in results["steps"] if not s.get("ok")]
        assert not failed and results["returncode"] == 0, json.dumps(
            {"failed": failed, "output": results["output"], "screenshots": str(shots)}, indent=1
        )
        assert len(steps) == 8, results

        # Ghost text appeared, Tab accepted it, and the saved file holds it.
        assert steps["ghost text"]["ghost"].strip()
        saved = (workspace / "shapes.py").read_text()
        assert saved.startswith("import math\n\n\ndef circle_area(radius: float) -> float:\n")
        body = saved.split('"""Return the area of a circle of the given radius."""\n', 1)[1]
        assert steps["ghost text"]["ghost"].strip().split()[0] in body
        assert body.strip(), saved

        # The status bar shows the daemon's state and the last latency.
        assert "assist" in steps["accepted with Tab"]["status"]
        assert " ms" in steps["accepted with Tab"]["status"]

        # "Fix with assist" and "Assist: Fix File" fixed the files they were used on.
        assert any("Fix with assist" in item for item in steps["quick fix"]["menu"])
        for name in ("area.py", "listing.py"):
            fixed = (workspace / name).read_text()
            ast.parse(fixed)  # the saved file is Python again
        assert "def area(width, height):" in (workspace / "area.py").read_text()
        assert "sorted(os.listdir(root))" in (workspace / "listing.py").read_text()
        said = steps["fix file command"]["messages"]
        assert "assist: listing.py: fixed 1 error, 1 line changed (verified)" in said, said

        # The daemon stopped: one message, then the status bar came back on reconnect.
        assert len(steps["daemon stopped"]["messages"]) == 1
        assert len(steps["daemon back"]["messages"]) == 1
        assert "unavailable" not in steps["daemon back"]["status"]

        # Alt+] cycled to another of the completion's candidates.
        cycled = steps["next candidate"]
        assert cycled["first"].strip() and cycled["next"].strip(), cycled
        assert cycled["next"] != cycled["first"], cycled

        assert len(list(shots.glob("*.png"))) == 8
    finally:
        if restarted:
            with contextlib.suppress(ProcessLookupError):
                os.kill(restarted, signal.SIGTERM)
