"""The remote backends' figures as /metrics and the dashboard show them."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

from daemon.observe.backends import BackendCollector
from daemon.observe.dashboard import render
from daemon.observe.stats import summarize

BACKENDS = [
    {
        "url": "http://gpu1:8080",
        "state": "up",
        "in_flight": 2,
        "limit": 8,
        "requests": 120,
        "errors": 1,
        "failovers": 1,
        "first_token_p50_ms": 85.0,
        "total_p50_ms": 610.0,
        "last_error": None,
    },
    {
        "url": "http://gpu2:8080",
        "state": "down",
        "in_flight": 0,
        "limit": 8,
        "requests": 7,
        "errors": 3,
        "failovers": 2,
        "first_token_p50_ms": None,
        "total_p50_ms": None,
        "last_error": "health check: ConnectError: [Errno 111] Connection refused",
    },
]


def test_each_backend_is_a_labelled_series():
    registry = CollectorRegistry()
    registry.register(BackendCollector(lambda: BACKENDS))
    text = generate_latest(registry).decode()
    assert 'assist_backend_up{backend="http://gpu1:8080"} 1.0' in text
    assert 'assist_backend_up{backend="http://gpu2:8080"} 0.0' in text
    assert 'assist_backend_requests_total{backend="http://gpu1:8080"} 120.0' in text
    assert 'assist_backend_failovers_total{backend="http://gpu2:8080"} 2.0' in text
    assert 'assist_backend_first_token_seconds{backend="http://gpu1:8080"} 0.085' in text
    # No figure yet: no sample, rather than a made-up zero.
    assert 'assist_backend_first_token_seconds{backend="http://gpu2:8080"}' not in text


def test_the_dashboard_has_a_backends_table_only_with_backends():
    stats = summarize([], [], 3600, "language")
    page = render(stats, "m", "remote", None, BACKENDS)
    assert '<table id="backends">' in page
    assert "http://gpu2:8080</td><td>down" in page and "Connection refused" in page
    assert '<table id="backends">' not in render(stats, "m", "cpu", None, None)
