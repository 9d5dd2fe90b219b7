"""Language server options: camelCase or snake_case, one message per bad value, defaults kept."""

from __future__ import annotations

from lsp.options import AssistOptions, parse_options


def test_defaults_when_nothing_is_sent():
    options, problems = parse_options(None)
    assert options == AssistOptions() and problems == []
    assert options.debounce_ms == 75 and options.daemon_url is None


def test_camel_case_and_nested_assist_section():
    options, problems = parse_options({"assist": {"debounceMs": 10, "maxTokens": 32}})
    assert problems == []
    assert options.debounce_ms == 10 and options.max_tokens == 32


def test_each_bad_value_is_named_and_falls_back_alone():
    options, problems = parse_options(
        {"debounceMs": "soon", "maxTokens": -1, "logLevel": "loud", "autostart": False}
    )
    assert len(problems) == 3
    assert any("debounceMs" in p for p in problems)
    assert options.debounce_ms == 75 and options.max_tokens is None
    assert options.log_level == "info"
    assert options.autostart is False  # the good value still applies


def test_updates_merge_into_the_current_options():
    base, _ = parse_options({"daemonUrl": "http://10.0.0.2:8765", "debounceMs": 5})
    merged, problems = parse_options({"maxTokens": 12}, base)
    assert problems == []
    assert merged.daemon_url == "http://10.0.0.2:8765" and merged.debounce_ms == 5
    assert merged.max_tokens == 12


def test_not_an_object():
    options, problems = parse_options(["x"])
    assert options == AssistOptions() and len(problems) == 1
