"""``assist fix FILE [--write]``: repair the syntax errors of a file with a fix that parses."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from daemon.cli.document import locate, profile_of
from daemon.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, console, err
from daemon.cli.source_file import (
    FileTooLarge,
    InputError,
    WriteConflict,
    describe_size,
    read_source,
    write_atomically,
)
from daemon.cli.stream import ask
from daemon.protocol import DoneEvent, FixRequest
from daemon.settings import Settings


def largest_file(settings: Settings) -> int:
    """The largest file ``assist fix`` sends: its JSON (escapes included) must fit a request."""
    return settings.max_request_bytes // 2


def too_large(exc: FileTooLarge, settings: Settings) -> str:
    needed = -(-2 * exc.size // 2**20) * 2**20  # twice the file, rounded up to a MiB
    return (
        f"{exc.path} is {describe_size(exc.size)}; a fix sends the whole file, and files "
        f"of up to {describe_size(exc.limit)} fit a request (half the request size limit, "
        f"max_request_bytes = {settings.max_request_bytes:,}). Nothing was written. Fix the "
        f"broken part in a smaller file, or run the daemon and this command with "
        f"--max-request-bytes {needed} or more."
    )


def read_for_fix(settings: Settings, path: Path) -> str:
    try:
        return read_source(path, largest_file(settings))
    except FileTooLarge as exc:
        raise InputError(too_large(exc, settings)) from None


# The diff goes to stdout, the stages to stderr; ``--write`` replaces the file atomically, and only
# if it still holds the text that was fixed. When two repairs are about as likely and mean
# different things, both diffs are printed and ``--write`` declines (exit 1): the author chooses.
# When a later error was not repaired, nothing is written and the message says how far the repair
# got. Exit status: 0 fixed (or nothing to fix); 1 no verified fix, a choice to make with
# ``--write``, or the daemon failed; 2 bad usage or input (then nothing is written).
def run_fix(settings: Settings, args: argparse.Namespace) -> int:
    from daemon.cli.stage_view import print_diff

    try:
        text = read_for_fix(settings, args.file)
    except InputError as exc:
        err(str(exc))
        return EXIT_USAGE
    place = locate(args.file, args.workspace)
    request = FixRequest(
        text=text,
        path=place.shown,
        language=args.language,
        profile=profile_of(place, text, args.language),
        cache=not args.no_cache,
        candidates=args.candidates,
    )
    done = ask(settings, lambda client: client.fix(request), args.json, "fix")
    if not isinstance(done, DoneEvent):
        return done
    if not done.changed:
        if not args.json:
            print(f"{args.file}: {_declined(done)}", file=sys.stderr)
        return EXIT_OK if done.verified else EXIT_FAILED
    if done.alternatives:
        # Two repairs that mean different things, neither likelier: a question, not a fix.
        if not args.json:
            print(f"{args.file}: two repairs are about as likely; choose one:", file=sys.stderr)
            for number, (diff, rule) in enumerate(_choices(done), start=1):
                print(f"[{number}] {rule}", file=sys.stderr)
                print_diff(console(), diff)
            if args.write:
                print(f"{args.file}: not written", file=sys.stderr)
        return EXIT_FAILED if args.write else EXIT_OK
    if not args.json and done.diff:
        print_diff(console(), done.diff)
    if args.write:
        try:
            write_atomically(args.file, done.text, expected=text)
        except WriteConflict as exc:
            err(str(exc))
            return EXIT_FAILED
        except OSError as exc:
            err(f"cannot write {args.file}: {exc.strerror or exc}")
            return EXIT_FAILED
        if not args.json:
            print(f"{args.file}: fixed and written", file=sys.stderr)
    return EXIT_OK


def _declined(done: DoneEvent) -> str:
    """Why nothing changed: nothing wrong, nothing verified, or how far the repair got."""
    if done.verified:
        return "nothing to fix"
    if done.repairs and done.unrepaired is not None:
        left = done.unrepaired
        return (
            f"fixed {len(done.repairs)} error(s), but no verified fix for the next "
            f"(line {left.line + 1}: {left.message}); nothing was written"
        )
    return "no verified fix found"


def _choices(done: DoneEvent) -> list[tuple[str, str]]:
    """(diff, rule) of the chosen repair and of each alternative."""
    first = done.repairs[-1].rule if done.repairs else "repair"
    return [
        (done.diff or "", first),
        *((a.diff or "", a.rule or "repair") for a in done.alternatives),
    ]
