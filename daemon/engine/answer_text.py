"""The text of a generating job, token by token: what to show now and when the answer ends.
Stop strings, an ``until`` judge and a token-healing ``lead`` decide what is released.
"""

from __future__ import annotations

import codecs

from daemon.engine.jobs import Progress, Until


class AnswerText:
    """The released text of one job and the state behind it.

    Token bytes are decoded incrementally (a character split across tokens waits for its last
    byte). Text that may be the beginning of a stop string is held back until it is clear; a
    stop string ends the answer before it. With an ``until`` judge, text is released a whole
    line at a time and ``until`` decides after each line whether the answer is complete (and
    where it ends). The state can be saved as a ``Progress`` when a job yields, and resumed
    exactly. A ``lead`` (token healing: text the document already holds, which the model writes
    first) is taken off the front of the answer before anything else sees it; with ``to_code``
    the token that writes its last blank must write code too."""

    def __init__(
        self,
        stops: tuple[str, ...],
        until: Until | None,
        progress: Progress | None,
        lead: str = "",
        to_code: bool = False,
    ):
        progress = progress or Progress(leading=lead.encode("utf-8"))
        self.stops = stops
        self.until = until
        self._longest = max((len(s) for s in stops), default=0)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._decoder.setstate(progress.decoder_state)
        self.ids = progress.ids
        self.resumed_from = len(progress.ids)
        self.text = progress.text  # everything released so far
        self.pending = progress.pending  # held back: it may begin a stop string or a line
        self.leading = progress.leading  # the lead's bytes the model has not written yet
        # The last token ended a lead that ends in blanks (an indentation, the blank after
        # ``=``): the code starts now, and the next token may not add blanks to it.
        self.led_to_blanks = progress.led_to_blanks
        self.first_choice = progress.first_choice  # the first token that wrote past the lead
        self.to_code = to_code

    def add(self, token: int, piece: bytes) -> tuple[str, bool]:
        """Take one generated token; return the text to release now and whether the
        answer ended (a stop string, or ``until`` found its end)."""
        self.ids.append(token)
        self.led_to_blanks = False
        if self.leading:
            covered = min(len(self.leading), len(piece))
            if piece[:covered] != self.leading[:covered]:
                raise ValueError(f"token {piece!r} disagrees with the lead {self.leading!r}")
            ends_blank = self.leading[-1:] in (b" ", b"\t")
            self.leading, piece = self.leading[covered:], piece[covered:]
            self.led_to_blanks = ends_blank and not self.leading and not piece
        if piece and self.first_choice is None:
            self.first_choice = token
        pending = self.pending + self._decoder.decode(piece)
        if self.stops:
            hit = _find_stop(pending, self.stops)
            if hit is not None:
                self.pending = pending[:hit]
                return "", True
            held = _stop_prefix_length(pending, self.stops, self._longest)
            emit, pending = pending[: len(pending) - held], pending[len(pending) - held :]
        else:
            emit, pending = pending, ""
        ended = False
        if self.until is not None and emit:
            emit, pending, ended = _gate_lines(self.until, self.text, emit, pending)
        self.pending = "" if ended else pending
        self.text += emit
        return emit, ended

    def finish(self, complete: bool) -> str:
        """The held-back text to release at the end (none unless the answer is complete:
        cancelled or late answers end with what was shown)."""
        pending = self.pending + self._decoder.decode(b"", final=True)
        self.pending = ""
        if not complete or not pending:
            return ""
        if self.until is not None:
            cut = self.until(self.text + pending + "\n")
            if cut is not None:
                pending = (self.text + pending)[len(self.text) : max(cut, len(self.text))]
        self.text += pending
        return pending

    def progress(self) -> Progress:
        return Progress(
            self.ids,
            self.text,
            self.pending,
            self._decoder.getstate(),
            self.leading,
            self.led_to_blanks,
            self.first_choice,
        )

    @property
    def choosing(self) -> bool:
        """Whether the next token chooses what the answer writes: nothing past the lead is
        written yet, and what is left of it is not a run of blanks that only tokens of blanks
        can write (how they split an indentation is no choice)."""
        if self.first_choice is not None:
            return False
        return len(self.leading) < 2 or bool(self.leading.strip(b" \t"))

    def snapshot(self) -> Progress:
        """The state so far, for an answer that goes on from here on its own (a candidate
        that branches): nothing in it is shared with this one."""
        progress = self.progress()
        progress.ids = list(progress.ids)
        return progress


def _gate_lines(until: Until, text: str, emit: str, pending: str) -> tuple[str, str, bool]:
    """Release only complete lines of ``emit`` and ask ``until`` whether the answer ended."""
    newline = emit.rfind("\n")
    pending = emit[newline + 1 :] + pending
    emit = emit[: newline + 1]
    if not emit:
        return "", pending, False
    cut = until(text + emit)
    if cut is None:
        return emit, pending, False
    return (text + emit)[len(text) : max(cut, len(text))], "", True


def _stop_prefix_length(text: str, stops: tuple[str, ...], longest: int) -> int:
    """Length of the longest end of ``text`` that could still grow into a stop string."""
    for size in range(min(len(text), longest - 1), 0, -1):
        tail = text[-size:]
        if any(stop.startswith(tail) for stop in stops):
            return size
    return 0


def _find_stop(text: str, stops: tuple[str, ...]) -> int | None:
    found = [i for s in stops if (i := text.find(s)) >= 0]
    return min(found) if found else None
