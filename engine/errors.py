"""Small error taxonomy. Callers branch on the class, people read the message.

* :class:`BadInput` — the caller sent something wrong (4xx); names the input and cause.
* :class:`Unavailable` — a backend is down or overloaded; retry later (503).
* :class:`Corrupt` — an on-disk store is damaged or mismatched; names the path.
"""
from __future__ import annotations


class DocrayError(Exception):
    """Base class for every docray error."""

    retryable = False


class ConfigError(DocrayError, ValueError):
    """The configuration is invalid; the message names the field and the value."""


class BadInput(DocrayError, ValueError):
    """Input rejected. ``source`` names the file/field, ``cause`` says why."""

    def __init__(self, source: str, cause: str):
        self.source, self.cause = str(source), cause
        super().__init__(f"{self.source}: {cause}")


class EncryptedDocument(BadInput):
    """The document is password-protected."""


class TooLarge(BadInput):
    """The document exceeds a configured page or size limit."""


class Unavailable(DocrayError, RuntimeError):
    """A backend could not be reached or is overloaded; safe to retry."""

    retryable = True


class Corrupt(DocrayError, RuntimeError):
    """A store on disk is damaged or does not match what opened it."""

    def __init__(self, path: str, cause: str):
        self.path, self.cause = str(path), cause
        super().__init__(f"{self.path}: {cause}")


class NotFound(DocrayError, KeyError):
    """A document, artifact or unit id does not exist."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else "not found"
