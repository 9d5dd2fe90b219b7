"""What the daemon did, seen three ways: /v1/stats, /metrics and `assist stats --json` agree
with each other and with the requests sent; the dashboard draws them in a real Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from daemon.protocol import DoneEvent, parse_event
from tests.e2e.conftest import start_daemon
from tests.e2e.documents import LOAD_CONFIG, complete_body, unique

JS = "function total(items) {\n  return items.reduce((sum, item) => sum + item.price, "
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def stream(http: httpx.Client, path: str, body: dict) -> list:
    with http.stream("POST", path, json=body) as response:
        assert response.status_code == 200, response.read()
        return [parse_event(line) for line in response.iter_lines() if line.strip()]


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory):
    """A daemon and a known set of requests: what every view must report."""
    work = tmp_path_factory.mktemp("observed")
    daemon = start_daemon(
        work,
        metrics_path=work / "metrics.sqlite3",
        metrics_check_s=0.5,
        p99_warn_ms=1,
        hit_rate_floor=0.9,
    )
    sent: Counter[tuple[str, str]] = Counter()
    with httpx.Client(base_url=daemon.url, timeout=120, trust_env=False) as http:
        repeated = complete_body(unique(LOAD_CONFIG) + "data = ", mode="fast", language="python")
        first = stream(http, "/v1/complete", repeated)[-1]
        hit = stream(http, "/v1/complete", repeated)[-1]  # a cache hit
        assert isinstance(hit, DoneEvent) and hit.cached
        sent[("python", "complete")] += 2
        for i in range(20):  # enough fast-path completions for the watch to judge
            body = complete_body(unique(LOAD_CONFIG) + f"value_{i} = ", mode="fast", max_tokens=2)
            stream(http, "/v1/complete", {**body, "language": "python"})
            sent[("python", "complete")] += 1
        for i in range(2):
            body = complete_body(
                f"// {i}\n" + JS, path="cart.js", language="javascript", mode="fast"
            )
            stream(http, "/v1/complete", body)
            sent[("javascript", "complete")] += 1
        fixed = stream(
            http, "/v1/fix", {"text": unique("def f(x)\n    return x\n"), "path": "f.py"}
        )
        assert fixed[-1].changed is True
        stream(http, "/v1/fix", {"text": "x = 1\n", "path": "ok.py"})
        sent[("python", "fix")] += 2
        assert isinstance(first, DoneEvent) and not first.cached
        # The fresh answer accepted, the cache hit rejected, and an answer no request had.
        http.post("/v1/feedback", json={"request_id": first.request_id, "accepted": True})
        http.post("/v1/feedback", json={"request_id": hit.request_id, "accepted": False})
        http.post(
            "/v1/feedback",
            json={"request_id": "someone-else", "accepted": False, "language": "python"},
        )
    yield daemon, sent
    daemon.stop()


def test_stats_count_every_request_by_language_and_task(scripted):
    daemon, sent = scripted
    with httpx.Client(base_url=daemon.url, trust_env=False, timeout=60) as http:
        stats = http.get("/v1/stats", params={"window": "1h"}).json()
    groups = {(g["language"], g["task"]): g for g in stats["groups"]}
    assert {key: g["requests"] for key, g in groups.items()} == dict(sent)
    assert stats["totals"]["requests"] == sum(sent.values())
    python = groups[("python", "complete")]
    assert python["cache_hits"] == 1
    assert python["p50_ms"] <= python["p90_ms"] <= python["p99_ms"]
    assert python["acceptance_rate"] == round(1 / 3, 4)
    fixes = groups[("python", "fix")]
    assert fixes["fixes"] == 1 and fixes["fix_rate"] == 1.0  # "nothing to fix" is not a repair
    heat = stats["heatmap"]["rows"]
    assert sum(heat["python"].values()) == sent[("python", "complete")] + sent[("python", "fix")]
    assert sum(heat["javascript"].values()) == sent[("javascript", "complete")]
    assert sum(point["requests"] for point in stats["series"]) == sum(sent.values())


def prometheus_values(text: str) -> dict[str, float]:
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    return values


def test_metrics_agree_with_stats(scripted):
    daemon, sent = scripted
    with httpx.Client(base_url=daemon.url, trust_env=False, timeout=60) as http:
        text = http.get("/metrics").text
        values = prometheus_values(text)
        stats = http.get("/v1/stats", params={"window": "1h"}).json()
    # No GPU on this machine: no GPU gauges, and no NaN standing in for them.
    assert "assist_gpu" not in text and "NaN" not in text
    for (language, task), count in sent.items():
        key = f'assist_requests_total{{language="{language}",outcome="done",task="{task}"}}'
        assert values[key] == count
    hits = 'assist_cache_hits_total{language="python",match="exact",task="complete"}'
    groups = {(g["language"], g["task"]): g for g in stats["groups"]}
    assert values[hits] == groups[("python", "complete")]["cache_hits"] == 1
    assert values['assist_fixes_total{result="fixed"}'] == 1
    assert values['assist_fixes_total{result="nothing_to_fix"}'] == 1
    feedback = 'assist_feedback_total{{accepted="{}",answer="{}",language="python"}}'
    assert values[feedback.format("true", "fresh")] == 1
    assert values[feedback.format("false", "hit")] == 1
    assert values[feedback.format("false", "unlinked")] == 1
    latency = 'assist_request_seconds_count{language="python",route="fast",task="complete"}'
    assert values[latency] == sent[("python", "complete")]


def assist_stats(daemon, *args: str) -> subprocess.CompletedProcess[str]:
    """`assist stats ARGS` against the daemon, as a user runs it."""
    command = [sys.executable, "-m", "daemon.cli", "stats", *args]
    return subprocess.run(
        [*command, "--port", str(daemon.settings.port)], capture_output=True, text=True, timeout=60
    )


def test_the_cli_prints_the_same_figures(scripted):
    daemon, _ = scripted
    out = assist_stats(daemon, "--json", "--window", "1h")
    assert out.returncode == 0, out.stderr
    cli = json.loads(out.stdout)
    with httpx.Client(base_url=daemon.url, trust_env=False, timeout=60) as http:
        api = http.get("/v1/stats", params={"window": "1h"}).json()
    assert cli["groups"] == api["groups"]
    assert cli["totals"] == api["totals"]
    table = assist_stats(daemon)
    assert table.returncode == 0 and "javascript" in table.stdout and "python" in table.stdout


def test_cache_and_quality_figures_agree_in_every_view(scripted):
    """Hits against fresh answers, completions verified, first token's tail: /v1/stats,
    /metrics and `assist stats` show the same figures of the same requests."""
    daemon, sent = scripted
    with httpx.Client(base_url=daemon.url, trust_env=False, timeout=60) as http:
        stats = http.get("/v1/stats", params={"window": "1h"}).json()
        values = prometheus_values(http.get("/metrics").text)
    groups = {(g["language"], g["task"]): g for g in stats["groups"]}
    python = groups[("python", "complete")]
    assert python["hit_feedback"] == 1 and python["hit_acceptance_rate"] == 0.0
    assert python["fresh_feedback"] == 1 and python["fresh_acceptance_rate"] == 1.0
    assert python["unlinked_feedback"] == 1
    assert groups[("python", "fix")]["verified_rate"] is None  # a figure of completions
    for language in ("python", "javascript"):
        group = groups[(language, "complete")]
        verdicts = {
            verdict: values.get(
                f'assist_completion_verdicts_total{{language="{language}",verdict="{verdict}"}}',
                0.0,
            )
            for verdict in ("verified", "failed", "unchecked")
        }
        assert sum(verdicts.values()) == sent[(language, "complete")]
        assert verdicts["unchecked"] == group["unchecked"] == 0  # both have a parser here
        judged = verdicts["verified"] + verdicts["failed"]
        assert group["verified_rate"] == round(verdicts["verified"] / judged, 4)
        assert group["first_token_p50_ms"] <= group["first_token_p90_ms"]
        assert group["first_token_p90_ms"] <= group["first_token_p99_ms"]
    assert values['assist_acceptance_recent_ratio{answer="hit"}'] == 0.0
    assert values['assist_acceptance_recent_ratio{answer="fresh"}'] == 1.0
    # Under 100 answers each, P99 is the slowest first token: of all completions, the slower
    # of the two languages'.
    slowest = max(
        groups[(lang, "complete")]["first_token_p99_ms"] for lang in ("python", "javascript")
    )
    recent = values['assist_first_token_recent_seconds{quantile="0.99"}']
    assert recent == pytest.approx(slowest / 1000)

    table = assist_stats(daemon, "--window", "1h")
    assert table.returncode == 0, table.stderr
    assert "cache and quality" in table.stdout
    as_json = assist_stats(daemon, "--json", "--window", "1h")
    assert as_json.returncode == 0, as_json.stderr
    figures = {(g["language"], g["task"]): g for g in json.loads(as_json.stdout)["groups"]}
    for key in ("hit_acceptance_rate", "fresh_acceptance_rate", "verified_rate"):
        assert figures[("python", "complete")][key] == python[key], key
    assert figures[("python", "complete")]["first_token_p99_ms"] == python["first_token_p99_ms"]


def test_slow_p99_and_a_low_hit_rate_are_warned_about(scripted):
    daemon, _ = scripted
    for _ in range(50):
        log = daemon.log.read_text()
        if "above the threshold" in log and "below the floor" in log:
            break
        time.sleep(0.2)
    assert "P99 over the last" in log and "(setting p99_warn_ms)" in log
    assert "cache hit rate over the last" in log and "(setting hit_rate_floor)" in log


def test_the_dashboard_draws_the_requests_in_chromium(scripted, tmp_path: Path):
    daemon, sent = scripted
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium package is missing: `make test` installs it"
    url = f"{daemon.url}/dashboard?window=3600"
    profile = tmp_path / "profile"
    dom = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    page = dom.stdout
    screenshot = tmp_path / "dashboard.png"
    shot = subprocess.run(
        [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--window-size=1000,1300",
            f"--screenshot={screenshot}",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.returncode == 0, shot.stderr[-2000:]
    assert (
        screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and screenshot.stat().st_size > 10_000
    )
    print(f"dashboard screenshot: {screenshot}")

    cells = re.findall(
        r'class="heat" data-language="([^"]+)" data-bucket="[^"]+" data-count="(\d+)"', page
    )
    drawn: Counter[str] = Counter()
    for language, count in cells:
        drawn[language] += int(count)
    assert drawn["python"] == sent[("python", "complete")] + sent[("python", "fix")]
    assert drawn["javascript"] == sent[("javascript", "complete")]
    for series in ("p50_ms", "p99_ms", "cache_hit_rate"):
        match = re.search(rf'<polyline [^>]*data-series="{series}" data-points="(\d+)"', page)
        assert match and int(match.group(1)) >= 1, series
        assert '<circle class="' in page
    assert 'id="summary"' in page and ">javascript<" in page
    assert "CPU" in page  # no GPU here: the page says so
