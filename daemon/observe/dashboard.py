"""The dashboard page: the stats as something to look at, rendered on the server.
One self-contained HTML page: inline CSS and SVG, no build step, no script, no CDN.
"""

from __future__ import annotations

from html import escape
from typing import Any

WIDTH, HEIGHT, PAD = 640, 180, 36
WINDOWS = (("15 min", 900), ("1 h", 3600), ("24 h", 86400), ("7 d", 604800))
# Inline CSS and SVG: no build step, no script, no CDN, so the page works on a workstation with
# no internet.
STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1d2330; background: #f7f8fa; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 15px; margin: 24px 0 8px; }
.meta { color: #5b6473; } nav a { margin-right: 10px; }
table { border-collapse: collapse; background: #fff; }
th, td { padding: 4px 10px; border: 1px solid #dde1e8; text-align: right; }
th:first-child, td:first-child { text-align: left; }
td.heat { min-width: 90px; text-align: center; font-weight: 600; }
svg { background: #fff; border: 1px solid #dde1e8; }
.p50 { stroke: #2f6fde; } .p90 { stroke: #e0a21b; } .p99 { stroke: #d0463b; }
.hit { stroke: #2a9d62; } .line { fill: none; stroke-width: 2; }
.axis { stroke: #9aa3b2; stroke-width: 1; } .label { font-size: 11px; fill: #5b6473; }
.legend span { margin-right: 14px; font-weight: 600; }
"""


def _fmt(value: Any, unit: str = "") -> str:
    if value is None:
        return "–"
    if isinstance(value, float) and unit == "%":
        return f"{value:.0%}"
    if isinstance(value, float):
        return f"{value:,.0f}{unit}"
    return f"{value}{unit}"


def _heat_color(count: int, most: int) -> str:
    if count == 0 or most == 0:
        return "#ffffff"
    strength = 0.15 + 0.85 * count / most
    return f"rgba(47, 111, 222, {strength:.2f})"


def heatmap(stats: dict[str, Any]) -> str:
    buckets = stats["heatmap"]["buckets"]
    rows = stats["heatmap"]["rows"]
    if not rows:
        return '<p class="meta" id="heatmap-empty">No answered requests in this window.</p>'
    most = max(max(counts.values()) for counts in rows.values())
    head = "".join(f"<th>{escape(b)}</th>" for b in buckets)
    body = []
    for language in sorted(rows):
        cells = []
        for bucket in buckets:
            count = rows[language][bucket]
            cells.append(
                f'<td class="heat" data-language="{escape(language)}" '
                f'data-bucket="{escape(bucket)}"'
                f' data-count="{count}" style="background:{_heat_color(count, most)}">{count}</td>'
            )
        body.append(f"<tr><td>{escape(language)}</td>{''.join(cells)}</tr>")
    return f'<table id="heatmap"><tr><th>language</th>{head}</tr>{"".join(body)}</table>'


def _points(values: list[float | None], top: float) -> list[tuple[float, float]]:
    step = (WIDTH - 2 * PAD) / max(1, len(values) - 1)
    points = []
    for index, value in enumerate(values):
        if value is None:
            continue
        x = PAD + index * step
        y = HEIGHT - PAD - (HEIGHT - 2 * PAD) * (value / top if top else 0)
        points.append((x, y))
    return points


def line_chart(
    chart_id: str,
    series: list[dict[str, Any]],
    lines: dict[str, str],
    unit: str,
    start_label: str = "",
) -> str:
    values = [s[key] for s in series for key in lines if s[key] is not None]
    top = max(values) * 1.1 if values else 1.0
    if unit == "%":
        top = 1.0
    drawn = []
    for key, css in lines.items():
        points = _points([s[key] for s in series], top)
        joined = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        drawn.append(
            f'<polyline class="line {css}" data-series="{key}" data-points="{len(points)}" '
            f'points="{joined}"/>'
        )
        # A marker per point: a window with one busy minute still shows.
        drawn.extend(
            f'<circle class="{css}" cx="{x:.1f}" cy="{y:.1f}" r="3" fill="white" '
            f'stroke-width="2" data-series="{key}"/>'
            for x, y in points
        )
    top_label = f"{top:.0%}" if unit == "%" else f"{top:,.0f} {unit}"
    axes = (
        f'<line class="axis" x1="{PAD}" y1="{HEIGHT - PAD}" '
        f'x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}"/>'
        f'<line class="axis" x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{HEIGHT - PAD}"/>'
        f'<text class="label" x="4" y="{PAD}">{escape(top_label)}</text>'
        f'<text class="label" x="4" y="{HEIGHT - PAD}">0</text>'
        f'<text class="label" x="{PAD}" y="{HEIGHT - 12}">{escape(start_label)}</text>'
        f'<text class="label" x="{WIDTH - PAD - 20}" y="{HEIGHT - 12}">now</text>'
    )
    return (
        f'<svg id="{chart_id}" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img">{axes}{"".join(drawn)}</svg>'
    )


Columns = list[tuple[str, str, str]]
SUMMARY: Columns = [
    ("requests", "requests", ""),
    ("p50_ms", "P50", " ms"),
    ("p90_ms", "P90", " ms"),
    ("p99_ms", "P99", " ms"),
    ("first_token_p50_ms", "first token", " ms"),
    ("tokens_per_second", "tokens/s", ""),
    ("cache_hit_rate", "hit rate", "%"),
    ("acceptance_rate", "accepted", "%"),
    ("fix_rate", "fixed", "%"),
]
QUALITY: Columns = [
    ("hit_acceptance_rate", "hits accepted", "%"),
    ("hit_feedback", "of", ""),
    ("fresh_acceptance_rate", "fresh accepted", "%"),
    ("fresh_feedback", "of", ""),
    ("verified_rate", "verified", "%"),
    ("unchecked", "unchecked", ""),
    ("first_token_p50_ms", "first token P50", " ms"),
    ("first_token_p90_ms", "P90", " ms"),
    ("first_token_p99_ms", "P99", " ms"),
]


def _cells(figures: dict[str, Any], columns: Columns) -> str:
    return "".join(
        f'<td data-figure="{key}">{_fmt(figures[key], unit)}</td>' for key, _, unit in columns
    )


def table(stats: dict[str, Any], columns: Columns = SUMMARY, table_id: str = "summary") -> str:
    """A row per group and task, and one for all of them, of ``columns``."""
    by = stats["by"]
    head = "".join(f"<th>{label}</th>" for _, label, _ in columns)
    rows = [
        f"<tr><td>{escape(str(group[by]))}</td><td>{group['task']}</td>"
        f"{_cells(group, columns)}</tr>"
        for group in stats["groups"]
    ]
    rows.append(f'<tr class="all"><td>all</td><td></td>{_cells(stats["totals"], columns)}</tr>')
    return (
        f'<table id="{table_id}"><tr><th>{by}</th><th>task</th>{head}</tr>{"".join(rows)}</table>'
    )


def gpu_panel(gpus: list[dict[str, Any]] | None, backend: str) -> str:
    if not gpus:
        return f'<p id="gpu">CPU ({escape(backend)} backend): no GPU figures.</p>'
    rows = "".join(
        f"<tr><td>{escape(g['name'])}</td><td>{g['memory_used_mb']:,} / "
        f"{g['memory_total_mb']:,} MB</td><td>{g['utilization_percent']}%</td></tr>"
        for g in gpus
    )
    return f'<table id="gpu"><tr><th>GPU</th><th>memory</th><th>utilisation</th></tr>{rows}</table>'


def backend_panel(backends: list[dict[str, Any]]) -> str:
    """The remote backends: state, load, requests, errors, failovers and recent latency."""
    rows = "".join(
        f"<tr><td>{escape(b['url'])}</td><td>{escape(b['state'])}</td>"
        f"<td>{b['in_flight']} / {b['limit']}</td><td>{b['requests']}</td><td>{b['errors']}</td>"
        f"<td>{b['failovers']}</td><td>{_fmt(b['first_token_p50_ms'], ' ms')}</td>"
        f"<td>{_fmt(b['total_p50_ms'], ' ms')}</td>"
        f"<td>{escape(b['last_error'] or '')}</td></tr>"
        for b in backends
    )
    head = (
        "<tr><th>backend</th><th>state</th><th>in flight</th><th>requests</th><th>errors</th>"
        "<th>failovers</th><th>first token P50</th><th>answer P50</th><th>last error</th></tr>"
    )
    return f'<table id="backends">{head}{rows}</table>'


def _ago(window_s: float) -> str:
    if window_s >= 86400:
        return f"−{window_s / 86400:g} d"
    if window_s >= 3600:
        return f"−{window_s / 3600:g} h"
    return f"−{window_s / 60:g} min"


def render(
    stats: dict[str, Any],
    model: str,
    backend: str,
    gpus: list[dict[str, Any]] | None,
    backends: list[dict[str, Any]] | None = None,
) -> str:
    """The page: a heat map of latency buckets by language, percentile lines over time, the
    cache hit rate over time, the table per language and task, and the GPU (or "CPU"). It
    refreshes itself (its ``refresh`` meta tag)."""
    window = stats["window_s"]
    nav = " ".join(
        f'<a href="?window={seconds}">{label}</a>' if seconds != window else f"<b>{label}</b>"
        for label, seconds in WINDOWS
    )
    totals = stats["totals"]
    series = stats["series"]
    percentile_lines = {"p50_ms": "p50", "p90_ms": "p90", "p99_ms": "p99"}
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="15">
<title>assist: {escape(model)}</title><style>{STYLE}</style></head><body>
<h1>assist</h1>
<p class="meta">{escape(model)} on {escape(backend)} · {totals["requests"]} requests,
P50 {_fmt(totals["p50_ms"], " ms")}, P99 {_fmt(totals["p99_ms"], " ms")},
cache hit rate {_fmt(totals["cache_hit_rate"], "%")}</p>
<nav>window: {nav}</nav>
<h2>Latency by language</h2>
{heatmap(stats)}
<h2>Percentiles over time</h2>
<p class="legend"><span class="p50" style="color:#2f6fde">P50</span>
<span style="color:#e0a21b">P90</span><span style="color:#d0463b">P99</span></p>
{line_chart("percentiles", series, percentile_lines, "ms", _ago(window))}
<h2>Cache hit rate over time</h2>
{line_chart("hit-rate", series, {"cache_hit_rate": "hit"}, "%", _ago(window))}
<h2>By {escape(stats["by"])} and task</h2>
{table(stats)}
<h2>Cache and quality</h2>
<p class="meta">Are cache hits accepted as often as answers the model wrote for the request; the
share of completions whose text verified (unchecked: no checker for the language); time to
first token of the answers the model wrote.</p>
{table(stats, QUALITY, "quality")}
<h2>GPU</h2>
{gpu_panel(gpus, backend)}
{"<h2>Backends</h2>" + backend_panel(backends) if backends else ""}
</body></html>
"""
