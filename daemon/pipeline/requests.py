"""What every pipeline checks and works out first about a request: its limits and its language."""

from __future__ import annotations

import asyncio

from daemon.errors import InvalidRequest
from daemon.language import detect_language
from daemon.protocol import DocumentRequest
from daemon.settings import Settings


def check_limits(settings: Settings, max_tokens: int | None, deadline_ms: int | None) -> None:
    """Refuse budgets over this daemon's limits (``InvalidRequest``)."""
    if max_tokens is not None and max_tokens > settings.max_tokens_limit:
        raise InvalidRequest(
            f"max_tokens {max_tokens} is over this daemon's limit of {settings.max_tokens_limit}"
        )
    if deadline_ms is not None and deadline_ms > settings.deadline_limit_ms:
        raise InvalidRequest(
            f"deadline_ms {deadline_ms} is over this daemon's limit of {settings.deadline_limit_ms}"
        )


async def language_of(req: DocumentRequest) -> str | None:
    """The document's language: the profile's, or detected from path, language id and text."""
    language = req.profile.language if req.profile else None
    if language is None:
        # Content detection may load a model on first use: keep it off the event loop.
        language = await asyncio.to_thread(detect_language, req.path, req.text, req.language)
    return language
