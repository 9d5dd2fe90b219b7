"""Settings are declared once: defaults, config file, environment and flags, in that order."""

from __future__ import annotations

import argparse

import pytest

from daemon.settings import (
    SettingsError,
    add_setting_flags,
    is_loopback,
    load_settings,
    settings_from_args,
)


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    for name in list(__import__("os").environ):
        if name.startswith("ASSIST_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("ASSIST_CONFIG", str(tmp_path / "config.toml"))
    return tmp_path


def test_defaults_bind_loopback():
    settings = load_settings()
    assert settings.host == "127.0.0.1"
    assert settings.daemon_url == f"http://127.0.0.1:{settings.port}"


def test_precedence_flags_over_environment_over_file(isolated, monkeypatch):
    (isolated / "config.toml").write_text("fast_max_tokens = 10\nport = 9000\nn_ctx = 2048\n")
    monkeypatch.setenv("ASSIST_FAST_MAX_TOKENS", "20")
    monkeypatch.setenv("ASSIST_PORT", "9100")
    parser = argparse.ArgumentParser()
    add_setting_flags(parser)
    settings = settings_from_args(parser.parse_args(["--fast-max-tokens", "30"]))
    assert settings.fast_max_tokens == 30
    assert settings.port == 9100
    assert settings.n_ctx == 2048


def test_bad_values_name_the_setting(monkeypatch):
    monkeypatch.setenv("ASSIST_PORT", "70000")
    with pytest.raises(SettingsError, match="port"):
        load_settings()


def test_broken_config_file_is_a_clear_error(isolated):
    (isolated / "config.toml").write_text("port = = 3\n")
    with pytest.raises(SettingsError, match="config"):
        load_settings()


def test_every_setting_has_a_description_and_a_flag():
    from daemon.settings import Settings

    parser = argparse.ArgumentParser()
    add_setting_flags(parser)
    flags = {a.dest for a in parser._actions}
    for name, info in Settings.model_fields.items():
        assert info.description, name
        assert name in flags


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("0.0.0.0", False),
        ("10.0.0.2", False),
    ],
)
def test_loopback_detection(host, loopback):
    assert is_loopback(host) is loopback


def test_the_tokens_file_is_the_tokens_flag_in_every_command_that_takes_it():
    from daemon.cli.main import _parser

    commands = _parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    takes_it = {
        name: [a.option_strings for a in parser._actions if a.dest == "tokens"]
        for name, parser in commands.items()
    }
    assert takes_it["serve"] == [["--tokens"]]
    assert takes_it["tokens"] == [["--tokens"], ["--file"]]  # --file: the old name, hidden
    assert all(not flags for name, flags in takes_it.items() if name not in ("serve", "tokens"))


def test_the_tokens_setting_comes_from_the_environment_too(isolated, monkeypatch):
    monkeypatch.setenv("ASSIST_TOKENS", str(isolated / "team.toml"))
    assert load_settings().tokens == isolated / "team.toml"


def test_backends_come_from_repeated_flags_the_environment_and_the_file(isolated, monkeypatch):
    parser = argparse.ArgumentParser()
    add_setting_flags(parser)
    args = parser.parse_args(["--backend", "http://a:8080/", "--backend", "http://b:8080"])
    assert settings_from_args(args).backend == ["http://a:8080", "http://b:8080"]
    monkeypatch.setenv("ASSIST_BACKEND", '["http://c:8000"]')
    assert load_settings().backend == ["http://c:8000"]
    monkeypatch.delenv("ASSIST_BACKEND")
    (isolated / "config.toml").write_text('backend = ["http://d:8000", "https://e"]\n')
    assert load_settings().backend == ["http://d:8000", "https://e"]
    assert load_settings(backend=[]).backend == []


@pytest.mark.parametrize("urls", [["gpu-node:8080"], ["ftp://x"], ["http://a", "http://a/"]])
def test_a_backend_that_is_not_a_server_url_is_a_clear_error(urls):
    with pytest.raises(SettingsError, match="backend"):
        load_settings(backend=urls)


def test_a_started_daemon_reads_its_backends_back_from_the_environment(monkeypatch):
    from daemon.client.launcher import daemon_env

    settings = load_settings(backend=["http://a:1", "http://b:2"])
    env = daemon_env(settings)
    assert env["ASSIST_BACKEND"] == '["http://a:1", "http://b:2"]'
    monkeypatch.setenv("ASSIST_BACKEND", env["ASSIST_BACKEND"])
    assert load_settings().backend == settings.backend
