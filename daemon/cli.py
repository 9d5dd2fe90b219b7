"""The ``assist`` command line: serve, complete, doctor, cache, bench.

Lines and columns are 1-based here, as an editor's status bar shows them; the wire is 0-based.
Exit status: 0 success, 1 the daemon or the model failed (for ``fix``: no verified fix found),
2 bad usage or unreadable input.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from daemon import __version__
from daemon.settings import SettingsError, add_setting_flags, settings_from_args

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

SERVE_SETTINGS = None  # every setting is a flag of `serve`
CLIENT_SETTINGS = ["url", "host", "port", "token", "cache_dir", "model_path", "max_request_bytes"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="assist", description="A local coding assistant backed by a llama.cpp model."
    )
    parser.add_argument("--version", action="version", version=f"assist {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    serve = sub.add_parser("serve", help="run the daemon in the foreground")
    add_setting_flags(serve, SERVE_SETTINGS)

    complete = sub.add_parser("complete", help="complete FILE at a position (1-based)")
    complete.add_argument("file", type=Path)
    complete.add_argument("--line", type=int, required=True, help="1-based line of the cursor")
    complete.add_argument("--column", type=int, required=True, help="1-based column (characters)")
    complete.add_argument("--json", action="store_true", help="print the NDJSON events")
    complete.add_argument("--max-tokens", dest="request_max_tokens", type=int, default=None)
    complete.add_argument("--no-cache", action="store_true", help="do not answer from the cache")
    complete.add_argument("--language", help="language id, when the file name does not tell")
    complete.add_argument("--workspace", type=Path, help="workspace folder (default: found)")
    add_setting_flags(complete, CLIENT_SETTINGS)

    fix = sub.add_parser("fix", help="repair the syntax errors of FILE with a verified fix")
    fix.add_argument("file", type=Path)
    fix.add_argument("--write", action="store_true", help="replace the file with the fix")
    fix.add_argument("--json", action="store_true", help="print the NDJSON events")
    fix.add_argument("--no-cache", action="store_true", help="do not answer from the cache")
    fix.add_argument("--language", help="language id, when the file name does not tell")
    fix.add_argument("--workspace", type=Path, help="workspace folder (default: found)")
    fix.add_argument("--candidates", type=int, help="model candidates to try at most")
    add_setting_flags(fix, CLIENT_SETTINGS)

    lsp = sub.add_parser("lsp", help="run the language server on stdio (for editors)")
    add_setting_flags(lsp, CLIENT_SETTINGS)

    stats = sub.add_parser("stats", help="latency, cache, acceptance and fix figures")
    stats.add_argument("--window", default="1h", help="how far back: 900, 15m, 1h, 7d")
    stats.add_argument("--by", default="language", choices=["language", "path", "user"])
    stats.add_argument("--json", action="store_true", help="print the figures as JSON")
    add_setting_flags(stats, [*CLIENT_SETTINGS, "metrics_path"])

    tokens = sub.add_parser("tokens", help="per-user tokens for a shared daemon")
    tokens.add_argument("action", choices=["add", "remove", "list"])
    tokens.add_argument("name", nargs="?", help="the user (add, remove)")
    tokens.add_argument("--file", type=Path, required=True, help="the tokens file (TOML)")

    doctor = sub.add_parser("doctor", help="check the installation, the model and the daemon")
    add_setting_flags(doctor, [*CLIENT_SETTINGS, "prompt_format", "cache_path"])

    cache = sub.add_parser("cache", help="result cache: stats or clear")
    cache.add_argument("action", choices=["stats", "clear"])
    add_setting_flags(cache, [*CLIENT_SETTINGS, "cache_path"])

    bench = sub.add_parser("bench", help="measure latency, cache hits and daemon overhead")
    bench.add_argument("--repeat", type=int, default=5, help="runs per measurement")
    bench.add_argument("--completion-tokens", type=int, default=32, help="tokens per completion")
    bench.add_argument("--json", action="store_true", help="print the figures as JSON")
    add_setting_flags(bench, ["model_path", "n_ctx", "n_threads", "cache_dir"])
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = settings_from_args(args)
    except SettingsError as exc:
        print(f"assist: {exc}", file=sys.stderr)
        return EXIT_USAGE
    level = getattr(logging, settings.log_level.upper(), logging.INFO)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("llama.cpp").setLevel(
        logging.DEBUG if level <= logging.DEBUG else logging.ERROR
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)

    if args.command == "lsp":
        from lsp.server import main as lsp_main

        lsp_main(settings)
        return EXIT_OK
    if args.command == "serve":
        from daemon.commands import run_serve

        return run_serve(settings)
    if args.command == "complete":
        from daemon.commands import run_complete

        return run_complete(settings, args)
    if args.command == "fix":
        from daemon.commands import run_fix

        return run_fix(settings, args)
    if args.command == "stats":
        from daemon.stats_view import run_stats

        return run_stats(settings, args.window, args.by, args.json)
    if args.command == "tokens":
        from daemon.commands import run_tokens

        return run_tokens(args.action, args.name, args.file)
    if args.command == "doctor":
        from daemon.doctor import run_doctor

        return run_doctor(settings)
    if args.command == "cache":
        from daemon.commands import run_cache

        return run_cache(settings, args.action)
    if args.command == "bench":
        from daemon.bench import run_bench

        return run_bench(
            settings, repeat=args.repeat, tokens=args.completion_tokens, as_json=args.json
        )
    return EXIT_USAGE


def print_json(data: object) -> None:
    print(json.dumps(data, indent=2, sort_keys=True))


if __name__ == "__main__":
    sys.exit(main())
