"""What the ``serve``, ``complete`` and ``cache`` commands do (``cli`` only parses)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from daemon.client import DaemonClient, DaemonError, DaemonUnavailable
from daemon.launcher import ensure_daemon
from daemon.protocol import CompleteRequest, DoneEvent, ErrorEvent, TokenEvent
from daemon.settings import Settings
from daemon.source_file import InputError, read_source

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _err(message: str) -> None:
    print(f"assist: {message}", file=sys.stderr)


def run_serve(settings: Settings) -> int:
    from daemon.server import ServeError, serve
    from models.resolve import ModelNotFound

    def announce(text: str) -> None:
        print(text, flush=True)

    try:
        serve(settings, announce)
    except (ServeError, ModelNotFound) as exc:
        _err(str(exc))
        return EXIT_FAILED
    return EXIT_OK


def _position(text: str, line: int, column: int) -> tuple[int, int]:
    """Check a 1-based position against the text; return it 0-based."""
    lines = text.split("\n")
    if line < 1 or line > len(lines):
        raise InputError(f"--line {line} is outside the file, which has {len(lines)} lines")
    length = len(lines[line - 1].rstrip("\r"))
    if column < 1 or column > length + 1:
        raise InputError(
            f"--column {column} is outside line {line}, which has {length} characters "
            f"(the column after the last character is {length + 1})"
        )
    return line - 1, column - 1


def build_request(settings: Settings, args: argparse.Namespace) -> CompleteRequest:
    from daemon.workspace import compute_profile, find_workspace_root

    path: Path = args.file
    text = read_source(path, settings.max_request_bytes // 2)
    line, column = _position(text, args.line, args.column)
    absolute = path.resolve()
    root = args.workspace.resolve() if args.workspace else find_workspace_root(absolute)
    profile = compute_profile(root, absolute, text, args.language)
    try:
        shown = str(absolute.relative_to(root))
    except ValueError:
        shown = absolute.name
    return CompleteRequest(
        text=text,
        line=line,
        column=column,
        path=shown,
        language=args.language,
        profile=profile,
        max_tokens=args.request_max_tokens,
        cache=not args.no_cache,
    )


def run_complete(settings: Settings, args: argparse.Namespace) -> int:
    try:
        request = build_request(settings, args)
    except InputError as exc:
        _err(str(exc))
        return EXIT_USAGE
    try:
        ensure_daemon(settings)
        with DaemonClient(settings.daemon_url) as client:
            done: DoneEvent | None = None
            for event in client.complete(request):
                if args.json:
                    print(event.model_dump_json(), flush=True)
                elif isinstance(event, TokenEvent):
                    sys.stdout.write(event.text)
                    sys.stdout.flush()
                if isinstance(event, ErrorEvent):
                    if not args.json:
                        _err(f"{event.code}: {event.message}")
                    return EXIT_FAILED
                if isinstance(event, DoneEvent):
                    done = event
    except DaemonError as exc:
        _err(str(exc))
        return EXIT_USAGE if exc.status in (400, 413, 422) else EXIT_FAILED
    if done is None:
        _err("the daemon ended the stream without a result")
        return EXIT_FAILED
    if not args.json:
        t = done.timings
        source = "cache" if done.cached else f"{done.finish_reason}, {done.tokens} tokens"
        first = f", first token {t.first_token_ms:.0f} ms" if t.first_token_ms is not None else ""
        print(file=sys.stdout)
        print(f"[{source}: {t.total_ms:.0f} ms{first}]", file=sys.stderr)
    return EXIT_OK


def run_cache(settings: Settings, action: str) -> int:
    from daemon.cache import ResultCache

    with DaemonClient(settings.daemon_url) as client:
        try:
            data = client.cache_stats() if action == "stats" else client.cache_clear()
            where = f"daemon at {settings.daemon_url}"
        except DaemonUnavailable:
            cache = ResultCache(settings.resolved_cache_path, memory_entries=0)
            try:
                data = cache.stats() if action == "stats" else {"removed": cache.clear()}
            finally:
                cache.close()
            where = "file (no daemon running)"
        except DaemonError as exc:
            _err(str(exc))
            return EXIT_FAILED
    if action == "clear":
        print(f"removed {data['removed']} cached results ({where})")
        return EXIT_OK
    print(f"result cache ({where})")
    for key in (
        "path",
        "entries",
        "bytes",
        "file_bytes",
        "stored_hits",
        "memory_entries",
        "session_hits",
        "session_misses",
    ):
        if key in data:
            print(f"  {key:<15} {data[key]}")
    return EXIT_OK
