"""``assist complete FILE --line N --column N``: the completion at a position of a file."""

from __future__ import annotations

import argparse
import sys

from daemon.cli.document import check_position, locate, profile_of
from daemon.cli.output import EXIT_OK, EXIT_USAGE, err
from daemon.cli.source_file import FileTooLarge, InputError, describe_size, read_source
from daemon.cli.stream import ask
from daemon.client.window import window_around
from daemon.protocol import CompleteRequest, ContextSnippet, DoneEvent
from daemon.settings import Settings

# The largest file read to find the window: the text is held in memory a few times over.
MAX_FILE_BYTES = 256 * 1024 * 1024


# Only a window of the file around the cursor goes to the daemon: the daemon cuts every prompt to a
# few thousand tokens around the cursor anyway, and a whole generated or vendored file of many
# megabytes would be over its request size limit. The file is read whole (up to MAX_FILE_BYTES) to
# find the window; the workspace profile sees only the window. With the window go the signatures
# and docstrings of what the file imports from its workspace (``--workspace``, or the one found for
# the file), unless ``--no-context``.
def build_request(args: argparse.Namespace) -> CompleteRequest:
    """The request for the cursor of ``args``: the window around it, and its profile."""
    try:
        text = read_source(args.file, MAX_FILE_BYTES)
    except FileTooLarge as exc:
        raise InputError(
            f"{exc.path} is {describe_size(exc.size)}; a completion reads files of up to "
            f"{describe_size(exc.limit)} to find the text around the cursor"
        ) from None
    line, column = check_position(text, args.line, args.column)
    place = locate(args.file, args.workspace)
    window = window_around(text, line, column)
    language = args.language
    if language is None and window.text is not text:
        # Without its first line (a shebang) the window may no longer tell the language.
        from daemon.language import detect_language

        language = detect_language(str(place.absolute), text)
    context: list[ContextSnippet] = []
    if not getattr(args, "no_context", False):
        from daemon.workspace.context import gather_context

        context = gather_context(place.absolute, text, line, place.root, language=language)
    del text  # the window is all that is needed from here on
    return CompleteRequest(
        text=window.text,
        line=window.line,
        column=window.column,
        path=place.shown,
        language=language,
        profile=profile_of(place, window.text, language),
        max_tokens=args.request_max_tokens,
        cache=not args.no_cache,
        context=context,
        repository=place.root.name if context else None,
    )


# The completion goes to stdout, the stages as they arrive to stderr; with ``--json`` the NDJSON
# events go to stdout, their text what to insert at the cursor, whatever the window.
def run_complete(settings: Settings, args: argparse.Namespace) -> int:
    try:
        request = build_request(args)
    except InputError as exc:
        err(str(exc))
        return EXIT_USAGE
    done = ask(settings, lambda client: client.complete(request), args.json, "complete")
    if not isinstance(done, DoneEvent):
        return done
    if not args.json:
        t = done.timings
        source = "cache" if done.cached else f"{done.route} path, {done.tokens} tokens"
        first = f", first token {t.first_token_ms:.0f} ms" if t.first_token_ms is not None else ""
        checked = "" if done.verified else ", not verified"
        sure = f", confidence {done.confidence:.0%}" if done.confidence is not None else ""
        others = f", {len(done.alternatives)} other candidate(s)" if done.alternatives else ""
        print(done.text)
        print(f"[{source}: {t.total_ms:.0f} ms{first}{checked}{sure}{others}]", file=sys.stderr)
        if done.withheld is not None:
            print(
                "[withheld: the model was not sure enough of its answer (min_confidence); "
                f"it was:]\n{done.withheld}",
                file=sys.stderr,
            )
    return EXIT_OK
