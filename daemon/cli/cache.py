"""``assist cache stats|clear``: the result cache, through the running daemon or on its file."""

from __future__ import annotations

from typing import Any

from daemon.cli.output import EXIT_FAILED, EXIT_OK, err
from daemon.client.daemon_client import DaemonClient, DaemonError, DaemonUnavailable
from daemon.settings import Settings

_SHOWN = (
    "path",
    "entries",
    "bytes",
    "file_bytes",
    "stored_hits",
    "memory_entries",
    "session_hits",
    "session_misses",
)


def _on_file(settings: Settings, action: str) -> dict[str, Any]:
    from daemon.store.result_cache import ResultCache

    cache = ResultCache(settings.resolved_cache_path, memory_entries=0)
    try:
        return cache.stats() if action == "stats" else {"removed": cache.clear()}
    finally:
        cache.close()


def run_cache(settings: Settings, action: str) -> int:
    with DaemonClient.for_settings(settings) as client:
        try:
            data = client.cache_stats() if action == "stats" else client.cache_clear()
            where = f"daemon at {settings.daemon_url}"
        except DaemonUnavailable:
            data = _on_file(settings, action)
            where = "file (no daemon running)"
        except DaemonError as exc:
            err(str(exc))
            return EXIT_FAILED
    if action == "clear":
        print(f"removed {data['removed']} cached results ({where})")
        return EXIT_OK
    print(f"result cache ({where})")
    for key in _SHOWN:
        if key in data:
            print(f"  {key:<15} {data[key]}")
    return EXIT_OK
