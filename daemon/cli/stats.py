"""``assist stats``: the daemon's figures as a table in the terminal, or JSON for scripts.
With no daemon running it reads the metrics file itself."""

from __future__ import annotations

import sqlite3
import sys
import time
from typing import Any

from daemon.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, console, err, print_json
from daemon.client.daemon_client import DaemonClient, DaemonError, DaemonUnavailable
from daemon.observe.stats import parse_window, summarize
from daemon.settings import Settings

Columns = tuple[tuple[str, str, str], ...]
COLUMNS: Columns = (
    ("requests", "requests", "{:,}"),
    ("p50_ms", "P50 ms", "{:,.0f}"),
    ("p90_ms", "P90 ms", "{:,.0f}"),
    ("p99_ms", "P99 ms", "{:,.0f}"),
    ("first_token_p50_ms", "1st token ms", "{:,.0f}"),
    ("tokens_per_second", "tok/s", "{:,.1f}"),
    ("cache_hit_rate", "hit rate", "{:.0%}"),
    ("acceptance_rate", "accepted", "{:.0%}"),
    ("fix_rate", "fixed", "{:.0%}"),
)
# The second table: are cache hits as good as fresh answers, and how fast is the first token.
QUALITY_COLUMNS: Columns = (
    ("hit_acceptance_rate", "hits accepted", "{:.0%}"),
    ("hit_feedback", "of", "{:,}"),
    ("fresh_acceptance_rate", "fresh accepted", "{:.0%}"),
    ("fresh_feedback", "of", "{:,}"),
    ("verified_rate", "verified", "{:.0%}"),
    ("unchecked", "unchecked", "{:,}"),
    ("first_token_p90_ms", "1st token P90", "{:,.0f}"),
    ("first_token_p99_ms", "1st token P99", "{:,.0f}"),
)


def _from_file(settings: Settings, window: str, by: str) -> dict[str, Any]:
    from daemon.observe.metrics_file import connect, read_feedback, read_requests

    path = settings.resolved_metrics_path
    if not path.exists():
        raise FileNotFoundError(f"no daemon answers and there is no metrics file at {path}")
    window_s = parse_window(window)
    since = time.time() - window_s
    conn = connect(path)
    try:
        rows, feedback = read_requests(conn, since), read_feedback(conn, since)
    finally:
        conn.close()
    return summarize(rows, feedback, window_s, by)


def _cell(value: Any, pattern: str) -> str:
    return "–" if value is None else pattern.format(value)


def _table(figures: dict[str, Any], title: str, columns: Columns) -> Any:
    """One row per group and one for all, of ``columns``."""
    from rich.table import Table

    by = figures["by"]
    table = Table(title=title, title_justify="left")
    table.add_column(by)
    table.add_column("task")
    for _, label, _ in columns:
        table.add_column(label, justify="right")
    for group in figures["groups"]:
        cells = (_cell(group[key], pattern) for key, _, pattern in columns)
        table.add_row(str(group[by]), group["task"], *cells)
    totals = figures["totals"]
    table.add_row("all", "", *(_cell(totals[key], pattern) for key, _, pattern in columns))
    return table


def print_table(figures: dict[str, Any], source: str) -> None:
    hours = figures["window_s"] / 3600
    out = console(width=None if sys.stdout.isatty() else 140)
    out.print(_table(figures, f"assist stats: the last {hours:g} h ({source})", COLUMNS))
    out.print(_table(figures, "cache and quality", QUALITY_COLUMNS))


def run_stats(settings: Settings, window: str, by: str, as_json: bool) -> int:
    try:
        parse_window(window)
    except ValueError:
        err(f"--window {window!r}: use 900, 15m, 1h or 7d")
        return EXIT_USAGE
    try:
        with DaemonClient.for_settings(settings) as client:
            figures = client.stats(window, by)
        source = f"daemon at {settings.daemon_url}"
    except DaemonUnavailable:
        try:
            figures = _from_file(settings, window, by)
        except FileNotFoundError as exc:
            err(str(exc))
            return EXIT_FAILED
        except sqlite3.Error as exc:
            path = settings.resolved_metrics_path
            err(f"the metrics file {path} could not be read or upgraded ({exc})")
            return EXIT_FAILED
        source = f"file {settings.resolved_metrics_path}"
    except DaemonError as exc:
        err(str(exc))
        return EXIT_FAILED
    if as_json:
        print_json(figures)
    else:
        print_table(figures, source)
    return EXIT_OK
