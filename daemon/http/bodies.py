"""Request bodies: read with a size limit, then parsed and validated into the wire types.
A body over the limit is refused with 413 before it is parsed.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request
from pydantic import BaseModel, ValidationError

from daemon.errors import BadRequest, InvalidRequest, TooLarge

# Bytes of an oversized body read and dropped so that the client can read the 413; past this
# the connection is closed instead. A client that sends its whole body without waiting for
# ``100 Continue`` (Python's urllib, most scripts) would otherwise see the connection reset
# instead of the 413 and its message.
DISCARD_BYTES = 64 * 1024 * 1024


def describe_validation(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "body"
        parts.append(f"{where}: {err['msg']}")
    more = len(exc.errors()) - 5
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


async def _drain(request: Request, already: int) -> None:
    """Read and drop the rest of a refused body, up to DISCARD_BYTES in all."""
    total = already
    async for chunk in request.stream():
        total += len(chunk)
        if total > DISCARD_BYTES:
            return


async def read_body(request: Request, limit: int) -> bytes:
    """The request body; ``TooLarge`` (413) for anything over ``limit`` bytes, before it is
    parsed, so an oversized request costs nothing but the bytes."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            raise BadRequest("Content-Length is not a number") from None
        if size > limit:
            if size <= DISCARD_BYTES:
                await _drain(request, 0)
            raise TooLarge(
                f"the request body is {size} bytes; this daemon accepts at most {limit} "
                f"(setting max_request_bytes)"
            )
    chunks: list[bytes] = []
    total = 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > limit:
            await _drain(request, total)
            raise TooLarge(
                f"the request body is over this daemon's limit of {limit} bytes "
                f"(setting max_request_bytes)"
            )
        chunks.append(chunk)
    return b"".join(chunks)


def parse_request(body: bytes, model: type[BaseModel]) -> Any:
    if not body:
        raise BadRequest("the request has no body; send a JSON object")
    try:
        json.loads(body)
    except UnicodeDecodeError:
        raise BadRequest("the request body is not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise BadRequest(f"the request body is not valid JSON: {exc}") from None
    except (ValueError, RecursionError) as exc:
        # An integer of thousands of digits, or arrays nested thousands deep.
        raise BadRequest(f"the request body cannot be read: {exc}") from None
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        raise InvalidRequest(describe_validation(exc)) from None


async def read_request(request: Request, model: type[BaseModel], limit: int) -> Any:
    """The request's body, read with ``limit`` (``read_body``), as a ``model``."""
    return parse_request(await read_body(request, limit), model)
