"""Cache keys: what an answer depends on besides the model and its prompt.
One frozen record per kind of request, and the versions of the code that shapes answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from daemon.store.result_cache import cache_key

if TYPE_CHECKING:
    from daemon.pipeline.backend import Model

# Raise one when its code changes what is answered, so that what the cache kept is not served.
PROMPT_FORMAT_VERSION = 2  # models/families.py: a format's token layout
COMPLETION_RULES_VERSION = 9  # daemon/answers/gap: how an answer is fitted to its gap
REPAIR_RULES_VERSION = 2  # daemon/repair: which repairs are proposed and how they are ranked


@dataclass(frozen=True)
class CompletionKey:
    """A completion's answer, besides its prompt's tokens (which hold the document's window,
    the profile's header and the context): built once its route and shape are decided."""

    route: str  # fast or deep
    max_tokens: int
    client_budget: bool  # a client's own token budget lifts the fast path's line limit
    skip_errors: bool  # fast mode: a deep answer without its error-handling pass
    temperature: float
    stops: tuple[str, ...]
    errors_share: float | None  # the deep path's
    deep_comments: bool | None  # the deep path's
    tools: tuple[str, ...]  # the workspace's tools (ruff's findings rank answers)
    postprocess: bool
    rules: int | None  # COMPLETION_RULES_VERSION where answers are post-processed
    lead: str  # the text token healing took back from the prompt
    candidates: int | None  # the request's
    daemon_candidates: int  # the daemon's own ``candidates`` (more are ranked, one is shown)

    def digest(self, model: Model, tokens: Sequence[int]) -> str:
        return _digest(model, "complete", asdict(self), tokens)


@dataclass(frozen=True)
class RepairKey:
    """A repair's result, besides the tokens of its header and the file."""

    candidates: int
    max_tokens: int
    span_lines: int
    tools: tuple[str, ...]
    line_length: int | None
    hints: bool  # the rules (parser hints) first
    judge: bool  # the model judging ties
    rules: int = REPAIR_RULES_VERSION

    def digest(self, model: Model, tokens: Sequence[int]) -> str:
        return _digest(model, "fix", asdict(self), tokens)


def _digest(model: Model, kind: str, fields: dict[str, object], tokens: Sequence[int]) -> str:
    return cache_key(
        model.facts.fingerprint,
        model.format.name,
        PROMPT_FORMAT_VERSION,
        {"kind": kind, **fields},
        list(tokens),
    )
