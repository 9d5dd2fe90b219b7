"""The thinking markers' token ids in a remote server's vocabulary, and the bias against them.
The ids come from each server's own tokenize endpoint."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

# The OpenAI protocol's strongest bias: the token is never chosen.
BAN = -100

Post = Callable[[str, dict[str, Any]], httpx.Response]


def logit_bias(tokens: Iterable[int]) -> dict[str, int]:
    """The completions protocol's ``logit_bias`` that forbids ``tokens``."""
    return {str(token): BAN for token in tokens}


@dataclass(frozen=True)
class Tokenizer:
    """One server kind's tokenize endpoint: its path and the body it takes."""

    name: str
    path: str
    body: Callable[[str, str | None], dict[str, Any]]


TOKENIZERS = (
    Tokenizer(
        "llama.cpp",
        "/tokenize",
        lambda text, model: {"content": text, "add_special": False, "parse_special": True},
    ),
    Tokenizer(
        "vLLM",
        "/tokenize",
        lambda text, model: {"model": model, "prompt": text, "add_special_tokens": False},
    ),
    Tokenizer(
        "llama-cpp-python", "/extras/tokenize", lambda text, model: {"input": text, "model": model}
    ),
)


@dataclass(frozen=True)
class MarkerIds:
    """What a server's tokenizer says of the markers: ``ids`` of those that are one token of
    its vocabulary, and the ``tokenizer`` that said so (None: the server has none we know,
    and ``error`` says what each answered)."""

    ids: dict[str, int]
    tokenizer: str | None
    error: str | None = None

    @property
    def bias(self) -> dict[str, int]:
        return logit_bias(self.ids.values())


class NotNow(Exception):
    """The server could not be asked now (down, failing, too slow): ask again later."""


# The local engine forbids the tokens that open a reasoning section (``models.loaded``'s
# ``THINKING_MARKERS``); a remote server is sent the same as the completions protocol's logit bias.
# The ids come from the server's own tokenizer, not the local file's: a server may serve a model of
# the same base vocabulary with markers added (Qwen3 after Qwen2.5). Three tokenize endpoints are
# known: llama.cpp's server (``POST /tokenize`` with ``content``), vLLM (``POST /tokenize`` with
# ``prompt``) and llama-cpp-python's server (``POST /extras/tokenize`` with ``input``). A marker
# counts when the server spells it as one token (what its tokenizer puts before any text, a BOS,
# left aside); one spelled in several tokens is plain text in that vocabulary, not a marker.
def learn_marker_ids(post: Post, markers: Sequence[str], model: str | None) -> MarkerIds:
    """The markers' ids in the vocabulary of the server ``post`` reaches, from the first
    tokenize endpoint it answers; raises ``NotNow`` when it could not be asked."""
    refusals = []
    for tokenizer in TOKENIZERS:
        lead = _lead(post, tokenizer, model)
        if isinstance(lead, str):
            refusals.append(f"{tokenizer.path} ({tokenizer.name}): {lead}")
            continue
        ids = {}
        for marker in markers:
            tokens = _tokens(post, tokenizer, marker, model)
            if isinstance(tokens, str):
                raise NotNow(f"{tokenizer.path} stopped answering: {tokens}")
            if tokens[: len(lead)] == lead:
                tokens = tokens[len(lead) :]
            if len(tokens) == 1:
                ids[marker] = tokens[0]
        return MarkerIds(ids, tokenizer.name)
    return MarkerIds({}, None, "; ".join(refusals))


def _lead(post: Post, tokenizer: Tokenizer, model: str | None) -> list[int] | str:
    """What the tokenizer puts before any text (a BOS, or nothing): its tokens for the empty
    text; nothing when it refuses the empty text but tokenizes a word."""
    lead = _tokens(post, tokenizer, "", model)
    if isinstance(lead, str):
        word = _tokens(post, tokenizer, "a", model)
        return lead if isinstance(word, str) else []
    return lead


def _tokens(post: Post, tokenizer: Tokenizer, text: str, model: str | None) -> list[int] | str:
    """The server's tokens for ``text``, or why this endpoint gave none (it is not there, or
    not of this kind); raises ``NotNow`` for a failure that another try may not repeat."""
    try:
        response = post(tokenizer.path, tokenizer.body(text, model))
    except httpx.HTTPError as exc:
        raise NotNow(f"{type(exc).__name__}: {exc}") from exc
    if response.status_code >= 500 or response.status_code == 429:
        raise NotNow(f"{tokenizer.path}: HTTP {response.status_code}")
    if response.status_code >= 400:
        return f"HTTP {response.status_code}"
    try:
        tokens = response.json().get("tokens")
    except (ValueError, AttributeError):
        return "not a JSON object"
    if not isinstance(tokens, list) or not all(type(t) is int for t in tokens):
        return "no list of token ids"
    return tokens
