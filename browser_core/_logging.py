"""structlog set-up, called only by entry points (CLI, bench); libraries just log events.

Console renderer on a TTY, JSON lines otherwise; logs go to stderr so JSON on stdout stays
clean. A request id is bound per call with `structlog.contextvars`.
"""

from __future__ import annotations

import logging
import sys
import uuid
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

import structlog

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
_SECRET_KEYS = ("key", "token", "authorization", "cookie", "secret", "password")


def _redact(
    _logger: Any, _method: str, event: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """Last line of defence: never print a field whose name says it is a secret."""
    for name in list(event):
        if any(word in name.lower() for word in _SECRET_KEYS) and name != "failure_kind":
            event[name] = "<redacted>"
    return event


def configure_logging(level: str = "info", fmt: str = "auto") -> None:
    """Configure structlog for a process. `fmt`: auto (console on a TTY), json or console."""
    console = fmt == "console" or (fmt == "auto" and sys.stderr.isatty())
    renderer: Any = (
        structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
        if console
        else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _redact,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS.get(level, logging.INFO)),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def new_request_id() -> str:
    return uuid.uuid4().hex[:12]


@contextmanager
def bound_request(**fields: Any) -> Iterator[str]:
    """Bind a fresh request id (and fields) to every log event inside the block."""
    request_id = new_request_id()
    with structlog.contextvars.bound_contextvars(request_id=request_id, **fields):
        yield request_id
