"""What the ``serve``, ``complete`` and ``cache`` commands do (``cli`` only parses)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from daemon.client import DaemonClient, DaemonError, DaemonUnavailable
from daemon.launcher import ensure_daemon
from daemon.protocol import (
    CompleteRequest,
    DoneEvent,
    ErrorEvent,
    FixRequest,
    StageEvent,
    TokenEvent,
    WorkspaceProfile,
)
from daemon.settings import Settings
from daemon.source_file import InputError, WriteConflict, read_source, write_atomically

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


def read_with_profile(
    settings: Settings, args: argparse.Namespace
) -> tuple[str, str, WorkspaceProfile]:
    """The file's text, its path as shown to the model, and the workspace profile."""
    from daemon.workspace import compute_profile, find_workspace_root

    path: Path = args.file
    text = read_source(path, settings.max_request_bytes // 2)
    absolute = path.resolve()
    root = args.workspace.resolve() if args.workspace else find_workspace_root(absolute)
    profile = compute_profile(root, absolute, text, args.language)
    try:
        shown = str(absolute.relative_to(root))
    except ValueError:
        shown = absolute.name
    return text, shown, profile


def build_request(settings: Settings, args: argparse.Namespace) -> CompleteRequest:
    text, shown, profile = read_with_profile(settings, args)
    line, column = _position(text, args.line, args.column)
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


def _follow(events: Iterator[Any], as_json: bool, kind: str) -> DoneEvent | ErrorEvent | None:
    """Show a stream (NDJSON lines, or the live stage view on stderr); return how it ended."""
    from rich.console import Console

    from daemon.stage_view import StageView

    with StageView(Console(stderr=True), kind=kind) as view:
        for event in events:
            if as_json:
                print(event.model_dump_json(), flush=True)
            elif isinstance(event, StageEvent):
                view.stage(event)
            elif isinstance(event, TokenEvent):
                view.token(event)
            if isinstance(event, ErrorEvent):
                if not as_json:
                    _err(f"{event.code}: {event.message}")
                return event
            if isinstance(event, DoneEvent):
                return event
    _err("the daemon ended the stream without a result")
    return None


def _ask(
    settings: Settings,
    call: Callable[[DaemonClient], Iterator[Any]],
    as_json: bool,
    kind: str,
) -> DoneEvent | int:
    """Send a request to the daemon (started if needed) and follow its stream to the end."""
    try:
        ensure_daemon(settings)
        with DaemonClient.for_settings(settings) as client:
            done = _follow(call(client), as_json, kind)
    except DaemonError as exc:
        _err(str(exc))
        return EXIT_USAGE if exc.status in (400, 413, 422) else EXIT_FAILED
    return done if isinstance(done, DoneEvent) else EXIT_FAILED


def run_complete(settings: Settings, args: argparse.Namespace) -> int:
    """The answer goes to stdout; the stages, as they arrive, to stderr."""
    try:
        request = build_request(settings, args)
    except InputError as exc:
        _err(str(exc))
        return EXIT_USAGE
    done = _ask(settings, lambda client: client.complete(request), args.json, "complete")
    if not isinstance(done, DoneEvent):
        return done
    if not args.json:
        t = done.timings
        source = "cache" if done.cached else f"{done.route} path, {done.tokens} tokens"
        first = f", first token {t.first_token_ms:.0f} ms" if t.first_token_ms is not None else ""
        checked = "" if done.verified else ", not verified"
        print(done.text)
        print(f"[{source}: {t.total_ms:.0f} ms{first}{checked}]", file=sys.stderr)
    return EXIT_OK


def run_fix(settings: Settings, args: argparse.Namespace) -> int:
    """Exit 0: fixed (or nothing to fix); 1: no verified fix; 2: bad usage or input."""
    from rich.console import Console

    from daemon.stage_view import print_diff

    try:
        text, shown, profile = read_with_profile(settings, args)
    except InputError as exc:
        _err(str(exc))
        return EXIT_USAGE
    request = FixRequest(
        text=text,
        path=shown,
        language=args.language,
        profile=profile,
        cache=not args.no_cache,
        candidates=args.candidates,
    )
    done = _ask(settings, lambda client: client.fix(request), args.json, "fix")
    if not isinstance(done, DoneEvent):
        return done
    if not done.changed:
        if not args.json:
            message = "nothing to fix" if done.verified else "no verified fix found"
            print(f"{args.file}: {message}", file=sys.stderr)
        return EXIT_OK if done.verified else EXIT_FAILED
    if not args.json and done.diff:
        print_diff(Console(), done.diff)
    if args.write:
        try:
            write_atomically(args.file, done.text, expected=text)
        except WriteConflict as exc:
            _err(str(exc))
            return EXIT_FAILED
        except OSError as exc:
            _err(f"cannot write {args.file}: {exc.strerror or exc}")
            return EXIT_FAILED
        if not args.json:
            print(f"{args.file}: fixed and written", file=sys.stderr)
    return EXIT_OK


def run_tokens(action: str, name: str | None, path: Path) -> int:
    from daemon.auth import TokensError, add_user, read_users, remove_user

    try:
        if action == "list":
            for user in sorted(read_users(path)):
                print(user)
            return EXIT_OK
        if not name:
            _err(f"`assist tokens {action}` needs a user name")
            return EXIT_USAGE
        if action == "add":
            token = add_user(path, name)
            print(f"token for {name} (shown once; give it to {name} as ASSIST_TOKEN):")
            print(token)
            return EXIT_OK
        if not remove_user(path, name):
            _err(f"{path} has no user {name!r}")
            return EXIT_FAILED
        print(f"removed {name}; the daemon refuses their token from now on")
        return EXIT_OK
    except TokensError as exc:
        _err(str(exc))
        return EXIT_USAGE


def run_cache(settings: Settings, action: str) -> int:
    from daemon.cache import ResultCache

    with DaemonClient.for_settings(settings) as client:
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
