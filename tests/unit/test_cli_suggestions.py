"""Every command a message suggests (`assist ...` in backticks) is one that runs.

``SUGGESTIONS`` is the table of every such suggestion in the sources of daemon/ and lsp/; the
first test keeps it equal to the strings in the code, so a new message cannot slip past. The
others render each suggestion as users see it, parse it with the real parser, and run those that
need no daemon, triggered by the real errors. Those that suggest starting a daemon are run in
tests/e2e/test_cli_suggestions.py.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.cli.main import _parser
from daemon.client.launcher import daemon_flags, free_port, serve_command
from daemon.settings import DEFAULT_PORT, load_settings, settings_from_args
from daemon.tokens import TokensError, TokenStore, add_command
from models.catalog import CATALOG

ROOT = Path(__file__).resolve().parents[2]
ASSIST = [sys.executable, "-m", "daemon.cli"]
SUGGESTED = re.compile(r"`(assist [^`]*)`")

# (the source file, the suggestion as written there: f-string fields as {expression})
SUGGESTIONS = {
    ("daemon/http/serve.py", "assist tokens add NAME --tokens tokens.toml"),
    ("daemon/http/serve.py", "assist doctor --port {port}"),
    ("daemon/tokens.py", "assist tokens add NAME --tokens {shlex.quote(str(path))}"),
    ("daemon/cli/tokens.py", "assist tokens {action} NAME --tokens {file}"),
    ("daemon/cli/tokens.py", "assist tokens list --tokens {file}"),
    ("daemon/cli/doctor.py", "assist cache clear{daemon_flags(settings)}{named}"),
    ("daemon/observe/quality.py", "assist cache clear"),
    ("daemon/client/launcher.py", "assist serve{flags}"),
    ("daemon/settings.py", "assist models"),
    ("models/resolve.py", "assist models"),
    ("daemon/cli/models.py", "assist serve --model {other}"),
}


def _string_text(node: ast.expr) -> str:
    if isinstance(node, ast.Constant):
        return str(node.value)
    assert isinstance(node, ast.JoinedStr)
    return "".join(
        str(part.value) if isinstance(part, ast.Constant) else "{" + ast.unparse(part.value) + "}"  # type: ignore[attr-defined]
        for part in node.values
    )


def suggestions_in(path: Path) -> set[str]:
    """The backticked `assist ...` commands in the strings of a module, docstrings aside."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            skip.add(id(body[0].value))  # a docstring
        if isinstance(node, ast.JoinedStr):
            skip.update(id(part) for part in node.values)  # seen as part of the f-string
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.JoinedStr) or (
            isinstance(node, ast.Constant) and isinstance(node.value, str)
        ):
            found.update(SUGGESTED.findall(_string_text(node)))
    return found


def suggested_in_output(text: str) -> list[str]:
    """The commands an error message suggests, as the user reads them."""
    return SUGGESTED.findall(text)


def run_suggestion(
    command: str, cwd: Path, env: dict[str, str] | None = None, name: str = "alice"
) -> subprocess.CompletedProcess[str]:
    """Run a suggested command as a user would paste it (NAME: a user name)."""
    words = shlex.split(command)
    assert words[0] == "assist", command
    args = [name if word == "NAME" else word for word in words[1:]]
    return subprocess.run(
        [*ASSIST, *args],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


def assert_ran(out: subprocess.CompletedProcess[str], statuses: set[int]) -> None:
    assert out.returncode in statuses, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    assert "usage:" not in out.stderr, out.stderr  # argparse refused the command line


def test_the_table_lists_every_suggestion_in_the_sources():
    found = set()
    for folder in ("daemon", "lsp", "models"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            found.update((rel, command) for command in suggestions_in(path))
    assert found == SUGGESTIONS


def _parses(command: str) -> None:
    words = shlex.split(command)
    assert words[0] == "assist"
    args = _parser().parse_args([("alice" if w == "NAME" else w) for w in words[1:]])
    settings_from_args(args)


def rendered() -> list[str]:
    """Each suggestion of the table, rendered as the code renders it for various settings."""
    commands = [
        "assist tokens add NAME --tokens tokens.toml",
        "assist doctor --port 9123",
        "assist models",
        *(f"assist serve --model {name}" for name in CATALOG),
    ]
    for path in (Path("tokens.toml"), Path("/srv/assist/team tokens.toml")):
        commands.append(add_command(path).strip("`"))
        file = shlex.quote(str(path))
        commands += [f"assist tokens {action} NAME --tokens {file}" for action in ("add", "remove")]
        commands.append(f"assist tokens list --tokens {file}")
    for overrides in (
        {},
        {"port": 9123},
        {"host": "::1", "port": 9123},
        {"url": "http://127.0.0.1:9200"},
        {"url": "http://gpu-box.example:9300"},
        {"url": "https://assist.example"},
        {"host": "10.0.0.5"},
    ):
        settings = load_settings(**overrides)
        commands.append(serve_command(settings).strip("`"))
        commands.append(f"assist cache clear{daemon_flags(settings)} --cache-path '/tmp/a b.db'")
    return commands


@pytest.mark.parametrize("command", rendered())
def test_every_rendered_suggestion_parses(command):
    _parses(command)


def test_serve_suggestions_start_the_daemon_where_clients_look():
    assert serve_command(load_settings()) == "`assist serve`"
    assert serve_command(load_settings(port=9123)) == "`assist serve --port 9123`"
    remote = load_settings(url="http://gpu-box.example:9300")
    assert serve_command(remote) == (
        "`assist serve --host 0.0.0.0 --port 9300 --tokens tokens.toml "
        "--tls-cert cert.pem --tls-key key.pem`"
    )
    local_https = load_settings(url="https://localhost:9301")
    assert serve_command(local_https) == (
        "`assist serve --port 9301 --tls-cert cert.pem --tls-key key.pem`"
    )
    assert serve_command(load_settings(url=f"http://localhost:{DEFAULT_PORT}")) == "`assist serve`"


def test_a_missing_tokens_file_suggests_the_command_that_creates_it(tmp_path):
    tokens = tmp_path / "team tokens.toml"
    listed = run_suggestion(f"assist tokens list --tokens {shlex.quote(str(tokens))}", tmp_path)
    assert listed.returncode == 2
    [command] = suggested_in_output(listed.stderr)
    assert_ran(run_suggestion(command, tmp_path), {0})
    again = run_suggestion(f"assist tokens list --tokens {shlex.quote(str(tokens))}", tmp_path)
    assert_ran(again, {0})
    assert again.stdout == "alice\n"


def test_an_empty_tokens_file_suggests_adding_a_user(tmp_path):
    tokens = tmp_path / "tokens.toml"
    tokens.write_text("# nobody yet\n")
    with pytest.raises(TokensError) as refused:
        TokenStore(tokens)
    [command] = suggested_in_output(str(refused.value))
    assert_ran(run_suggestion(command, tmp_path), {0})
    assert TokenStore(tokens).users == ["alice"]


def test_tokens_without_a_name_or_with_an_unknown_one_suggest_what_runs(tmp_path):
    tokens = tmp_path / "tokens.toml"
    assert_ran(run_suggestion(f"assist tokens add bob --tokens {tokens}", tmp_path), {0})
    for action in ("add", "remove"):
        out = run_suggestion(f"assist tokens {action} --tokens {tokens}", tmp_path)
        assert out.returncode == 2
        [command] = suggested_in_output(out.stderr)
        assert_ran(run_suggestion(command, tmp_path, name="bob"), {0})
    unknown = run_suggestion(f"assist tokens remove carol --tokens {tokens}", tmp_path)
    assert unknown.returncode == 1
    [command] = suggested_in_output(unknown.stderr)
    assert_ran(run_suggestion(command, tmp_path), {0})


def test_the_old_file_flag_of_tokens_still_works(tmp_path):
    tokens = tmp_path / "tokens.toml"
    assert_ran(run_suggestion(f"assist tokens add alice --file {tokens}", tmp_path), {0})
    listed = run_suggestion(f"assist tokens list --tokens {tokens}", tmp_path)
    assert_ran(listed, {0})
    assert listed.stdout == "alice\n"
    helped = run_suggestion("assist tokens --help", tmp_path)
    assert "--tokens FILE" in helped.stdout and "--file" not in helped.stdout


def test_a_corrupt_cache_suggests_a_clear_of_that_cache(tmp_path):
    from daemon.cli.doctor import _cache

    cache = tmp_path / "broken cache.sqlite3"
    cache.write_bytes(b"not a database" * 100)
    port = str(free_port())
    settings = load_settings(cache_path=cache, port=int(port))
    with pytest.raises(RuntimeError) as failed:
        _cache(settings)()
    [command] = suggested_in_output(str(failed.value))
    assert f"--port {port}" in command and "--cache-path" in command
    assert_ran(run_suggestion(command, tmp_path), {0})
    _cache(settings)()  # readable again


def test_tokens_reads_the_tokens_setting_when_no_flag_names_the_file(tmp_path):
    tokens = tmp_path / "team.toml"
    env = {"ASSIST_TOKENS": str(tokens)}
    assert_ran(run_suggestion("assist tokens add alice", tmp_path, env), {0})
    listed = run_suggestion("assist tokens list", tmp_path, env)
    assert_ran(listed, {0})
    assert listed.stdout == "alice\n"
    unnamed = run_suggestion("assist tokens list", tmp_path)
    assert unnamed.returncode == 2 and "--tokens FILE" in unnamed.stderr


def test_an_unknown_model_name_suggests_the_list_of_models(tmp_path):
    out = run_suggestion("assist models --model gpt-5", tmp_path)
    assert out.returncode == 2 and "unknown model 'gpt-5'" in out.stderr
    [command] = suggested_in_output(out.stderr)
    listed = run_suggestion(command, tmp_path)
    assert_ran(listed, {0})
    assert all(name in listed.stdout for name in CATALOG)
