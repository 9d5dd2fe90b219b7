"""The terminal view of ``assist fix`` and ``assist complete``: each stage as it arrives.
A live view on a terminal's stderr, one line per stage elsewhere; the answer goes to stdout."""

from __future__ import annotations

from rich.console import Console, Group
from rich.live import Live
from rich.spinner import Spinner
from rich.syntax import Syntax
from rich.text import Text

from daemon.protocol import StageEvent, TokenEvent

_SHOWN_LINES = 8


class StageView:
    def __init__(self, console: Console, kind: str = "fix") -> None:
        self.console = console
        self.kind = kind
        self.stages: list[StageEvent] = []
        self.generating = ""
        self.candidate: int | None = None
        self.generating_stage: str | None = None
        self.live: Live | None = None

    def __enter__(self) -> StageView:
        if self.console.is_terminal:
            self.live = Live(self._render(), console=self.console, refresh_per_second=12)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.update(self._render(done=True))
            self.live.__exit__(None, None, None)

    def stage(self, event: StageEvent) -> None:
        self.stages.append(event)
        self.generating = ""
        if self.live is not None:
            self.live.update(self._render())
        else:
            self.console.print(self._stage_line(event))

    def token(self, event: TokenEvent) -> None:
        if event.candidate != self.candidate or event.stage != self.generating_stage:
            self.candidate = event.candidate
            self.generating_stage = event.stage
            self.generating = ""
        self.generating += event.text
        if self.live is not None:
            self.live.update(self._render())

    def _stage_line(self, event: StageEvent) -> Text:
        mark = "✓" if event.ok else "✗"
        line = Text(f"{mark} {event.stage:<9} {event.elapsed_ms:7.0f} ms  ")
        summary = event.reason or ""
        if not summary and self.kind == "fix":
            summary = event.text if event.stage == "skeleton" else "verified: the file parses"
        elif not summary:
            summary = event.text.strip().split("\n", 1)[0][:60]
        line.append(summary.replace("\n", "; "), style="dim" if event.ok else "red")
        return line

    def _render(self, done: bool = False) -> Group:
        parts: list[Text | Spinner] = [self._stage_line(e) for e in self.stages]
        if not done:
            label = f"writing {self.generating_stage or ''}" if self.generating else "working"
            if self.candidate is not None:
                label += f" candidate {self.candidate + 1}"
            parts.append(Spinner("dots", text=Text(label, style="cyan")))
            if self.generating:
                tail = "\n".join(self.generating.splitlines()[-_SHOWN_LINES:])
                parts.append(Text(tail, style="dim"))
        return Group(*parts)


def print_diff(console: Console, diff: str) -> None:
    if console.is_terminal:
        console.print(Syntax(diff, "diff", theme="ansi_dark", background_color="default"))
    else:
        console.file.write(diff)
        console.file.flush()
