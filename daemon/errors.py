"""Typed errors: what the pipelines, the engine and the HTTP layer raise when they refuse work.
Each carries its wire ``ErrorCode``; only ``daemon.http.errors`` maps codes to HTTP statuses.
"""

from __future__ import annotations

from typing import ClassVar

from daemon.protocol import ErrorCode, ErrorEvent


class AssistError(Exception):
    """A refusal with a code the client can act on and a message a person can read.

    ``daemon.http.errors`` maps codes to HTTP statuses and ``ErrorBody`` JSON in one place, and
    a stream that has already started ends with the same code in an ``error`` event. Nothing
    else chooses a status."""

    code: ClassVar[ErrorCode] = ErrorCode.INTERNAL

    def __init__(self, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after

    def event(self) -> ErrorEvent:
        return ErrorEvent(code=self.code, message=self.message)


class BadRequest(AssistError):
    code = ErrorCode.BAD_REQUEST


class InvalidRequest(AssistError):
    code = ErrorCode.INVALID_REQUEST


class InvalidPosition(AssistError):
    code = ErrorCode.INVALID_POSITION


class UnsupportedLanguage(AssistError):
    code = ErrorCode.UNSUPPORTED_LANGUAGE


class TooLarge(AssistError):
    code = ErrorCode.TOO_LARGE


class Unauthorized(AssistError):
    code = ErrorCode.UNAUTHORIZED


class RateLimited(AssistError):
    code = ErrorCode.RATE_LIMITED


class Busy(AssistError):
    """No room for the work now; ``retry_after`` (seconds) says when to try again."""

    code = ErrorCode.BUSY


class NotFound(AssistError):
    code = ErrorCode.NOT_FOUND


class MethodNotAllowed(AssistError):
    code = ErrorCode.METHOD_NOT_ALLOWED


class NoMetrics(AssistError):
    code = ErrorCode.NO_METRICS


class NotReady(AssistError):
    code = ErrorCode.NOT_READY


class ShuttingDown(AssistError):
    code = ErrorCode.SHUTTING_DOWN


class JobTimeout(AssistError):
    code = ErrorCode.TIMEOUT


class EngineFailed(AssistError):
    code = ErrorCode.ENGINE_ERROR
