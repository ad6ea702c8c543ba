"""HTTP-facing errors: status code, the field at fault, retryability, Retry-After."""
from __future__ import annotations

from docray.engine.errors import BadInput, DocrayError, NotFound, Unavailable


class ServeError(DocrayError):
    status = 500
    retryable = False

    def __init__(self, message: str, field: str | None = None, retry_after: int | None = None):
        super().__init__(message)
        self.message, self.field, self.retry_after = message, field, retry_after


class Unauthorized(ServeError):
    status = 401


class Forbidden(ServeError):
    status = 403


class Missing(ServeError):
    status = 404


class TooLargeUpload(ServeError):
    status = 413


class UnsupportedType(ServeError):
    status = 415


class StageFailed(ServeError):
    """A pipeline stage raised; the message names the stage."""

    status = 502
    retryable = True


class Overloaded(ServeError):
    """Admission or a stage queue is full: retry after ``retry_after`` seconds."""

    status = 503
    retryable = True


class RateLimited(ServeError):
    """The key sent more than its rate: retry after ``retry_after`` seconds."""

    status = 429
    retryable = True


class StageTimeout(ServeError):
    status = 504
    retryable = True


def classify(err: BaseException) -> ServeError:
    """Map any exception to a :class:`ServeError` (engine errors keep their meaning)."""
    if isinstance(err, ServeError):
        return err
    if isinstance(err, BadInput):
        return _with(ServeError(err.cause, field=err.source), 400)
    if isinstance(err, NotFound):
        return Missing(str(err))
    if isinstance(err, Unavailable):
        return Overloaded(str(err))
    return ServeError(f"internal error: {type(err).__name__}: {err}")


def _with(err: ServeError, status: int) -> ServeError:
    err.status = status
    return err
