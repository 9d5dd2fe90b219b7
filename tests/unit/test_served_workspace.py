"""The workspace an operator named: its profile for drop-in requests that bring none and whose
files lie in it; nothing a request names is opened."""

from __future__ import annotations

from pathlib import Path

from daemon.http.served_workspace import ServedWorkspace
from daemon.protocol import CompleteRequest, WorkspaceProfile


def request(**extra: object) -> CompleteRequest:
    return CompleteRequest(text="import json\n\ndef f():\n    return ", line=3, column=11, **extra)


def test_only_files_that_lie_in_the_folder_are_its(tmp_path: Path):
    served = ServedWorkspace(tmp_path)
    assert served.holds([]) and served.holds(["src/app.py", str(tmp_path / "a" / "b.py")])
    assert not served.holds(["/etc/passwd"])
    assert not served.holds(["../elsewhere/x.py"])
    assert not served.holds(["src/app.py", "/tmp/not-it/x.py"])


async def test_a_request_without_a_profile_gets_the_folders(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nrequires-python = ">=3.12"\ndependencies = ["httpx==0.28.1"]\n'
    )
    served = ServedWorkspace(tmp_path)
    profiled = await served.profiled(request(), ["demo/util.py"])
    assert profiled.profile is not None and profiled.repository == tmp_path.name
    assert profiled.profile.versions.get("python") == ">=3.12"
    assert any(d.name == "httpx" for d in profiled.profile.frameworks)
    # A request that brings a profile keeps it; one whose files lie elsewhere gets none.
    own = request(profile=WorkspaceProfile(language="python"))
    assert (await served.profiled(own, [])).profile == own.profile
    assert (await served.profiled(request(), ["/srv/other/x.py"])).profile is None
