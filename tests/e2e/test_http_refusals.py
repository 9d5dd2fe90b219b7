"""Refusals every client can read: a 413 for a body sent without waiting for 100 Continue, and
monitoring endpoints that a spent rate limit never refuses."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import RunningDaemon, start_daemon


def test_an_oversized_body_from_urllib_gets_the_413_and_its_message(daemon: RunningDaemon):
    """urllib sends the whole body at once; it must read the 413, not a reset connection."""
    limit = daemon.settings.max_request_bytes
    body = json.dumps({"text": "x" * (limit + 1024), "line": 0, "column": 0}).encode()
    request = urllib.request.Request(
        daemon.url + "/v1/complete",
        data=body,
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    assert refused.value.code == 413
    error = json.loads(refused.value.read())["error"]
    assert error["code"] == "too_large" and str(limit) in error["message"]
    assert refused.value.headers["x-request-id"] == error["request_id"]


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDaemon]:
    running = start_daemon(
        Path(tmp_path_factory.mktemp("limited")), rate_limit_per_minute=2, rate_limit_burst=2
    )
    yield running
    running.stop()


def test_health_and_metrics_are_never_rate_limited(limited: RunningDaemon):
    with limited.http() as http:
        statuses = [http.post("/v1/feedback", json={"request_id": "x", "accepted": True})]
        while statuses[-1].status_code != 429 and len(statuses) < 10:
            statuses.append(http.post("/v1/feedback", json={"request_id": "x", "accepted": True}))
        assert statuses[-1].status_code == 429
        assert statuses[-1].json()["error"]["code"] == "rate_limited"
        for _ in range(5):
            assert http.get("/health").status_code == 200
            assert http.get("/metrics").status_code == 200
        assert (
            http.post("/v1/feedback", json={"request_id": "x", "accepted": True}).status_code == 429
        )
