"""A daemon on Gemma 3 270M, chosen by name: the plain (prefix-only) prompt format end to end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon.protocol import DoneEvent, StartEvent, TokenEvent, parse_event
from models.catalog import CATALOG, assembled_path
from tests.e2e.conftest import RunningDaemon, start_daemon
from tests.e2e.documents import LOAD_CONFIG, complete_body, unique

SUFFIX = "\n\n\ndef save_config(path: Path, config: dict) -> None:\n    path.write_text('{}')\n" * 8


@pytest.fixture(scope="module")
def gemma(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDaemon]:
    running = start_daemon(tmp_path_factory.mktemp("gemma"), model="gemma-3-270m")
    yield running
    running.stop()


def events(running: RunningDaemon, body: dict) -> list:
    with running.http() as http, http.stream("POST", "/v1/complete", json=body) as response:
        assert response.status_code == 200, response.read()
        return [parse_event(line) for line in response.iter_lines() if line.strip()]


def test_the_named_model_is_loaded_with_the_plain_format(gemma):
    with gemma.http() as http:
        health = http.get("/health").json()
    gemma_entry = CATALOG["gemma-3-270m"]
    assert health["model_source"] == "embedded"
    assert health["model"] == "Gemma 3 270m"  # the GGUF's general.name
    assert health["prompt_format"] == "plain"
    assert health["model_path"] == str(assembled_path(gemma_entry, gemma.settings.cache_dir))
    assert Path(health["model_path"]).stat().st_size == gemma_entry.size


def test_a_completion_streams_and_finishes_from_the_prefix_alone(gemma):
    prefix = unique(LOAD_CONFIG)
    alone = events(gemma, complete_body(prefix, cache=False, mode="fast"))
    start, done = alone[0], alone[-1]
    assert isinstance(start, StartEvent) and start.prompt_format == "plain"
    assert isinstance(done, DoneEvent) and done.finish_reason in ("stop", "length")
    tokens = [e.text for e in alone if isinstance(e, TokenEvent)]
    # What streamed is the model's text; the answer shown is that text, or its start where
    # trimming to the gap cut lines off.
    assert tokens and "".join(tokens).startswith(done.text) and done.text.strip()
    assert done.tokens >= 1
    # The plain format has no place for the text after the cursor: the prompt is the same
    # with a long suffix as without one.
    line, column = len(prefix.split("\n")) - 1, len(prefix.split("\n")[-1])
    with_suffix = events(
        gemma,
        {
            "text": prefix + SUFFIX,
            "line": line,
            "column": column,
            "path": "app.py",
            "cache": False,
            "mode": "fast",
        },
    )
    assert isinstance(with_suffix[0], StartEvent)
    assert with_suffix[0].prompt_tokens == start.prompt_tokens
    assert isinstance(with_suffix[-1], DoneEvent)
