"""Logging: library code emits structlog events through the standard `logging` module.

Guards against a library that prints: unconfigured structlog writes to stdout, which
corrupts a host that speaks a protocol there (MCP over stdio, JSON output). On import the
library routes structlog through `logging` (unless the host configured structlog first)
and gives its loggers a `NullHandler`, so nothing reaches stdout or stderr until the host
configures logging. Entry points (CLI, service, bench) call `configure_logging`: stderr,
console on a TTY, JSON lines otherwise, secrets redacted. A request id is bound per call
with `structlog.contextvars`.
"""

from __future__ import annotations

import logging
import sys
import uuid
from collections.abc import Iterable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

import structlog

LIBRARY_LOGGERS = ("browser_core", "gemini", "search")
_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
_SECRET_KEYS = ("key", "token", "authorization", "cookie", "secret", "password")
REDACTED = "<redacted>"


def _redact(
    _logger: Any, _method: str, event: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """Last line of defence: never print a field whose name says it is a secret."""
    for name in list(event):
        if any(word in name.lower() for word in _SECRET_KEYS) and name != "failure_kind":
            event[name] = REDACTED
    return event


class _ScrubText:
    """After rendering: remove known secret values from the line (tracebacks included)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = tuple(s for s in secrets if s)

    def __call__(self, _logger: Any, _method: str, line: Any) -> Any:
        if isinstance(line, str):
            for secret in self.secrets:
                line = line.replace(secret, REDACTED)
        return line


def _to_stdlib(
    _logger: Any, _method: str, event: MutableMapping[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The library default's last step: a readable `event key=value` message for whatever
    handlers the host has, the fields kept on the record as `structlog` for its formatters."""
    exc_info = event.pop("exc_info", None)
    name = event.pop("event", "")
    fields = " ".join(f"{key}={_shown(value)}" for key, value in event.items())
    message = f"{name} {fields}".strip()
    return (message,), {"exc_info": exc_info, "extra": {"structlog": {"event": name, **event}}}


def _shown(value: Any) -> str:
    return repr(str(value)) if isinstance(value, str) else repr(value)  # StrEnum as its value


def use_library_default() -> None:
    """Route structlog events to `logging` (silent until the host configures logging).

    Runs on import when the host has not configured structlog; tests call it to undo an
    entry point's `configure_logging`.
    """
    for name in LIBRARY_LOGGERS:
        library = logging.getLogger(name)
        library.setLevel(logging.NOTSET)
        if not any(isinstance(h, logging.NullHandler) for h in library.handlers):
            library.addHandler(logging.NullHandler())
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _StderrHandler)]:
        root.removeHandler(handler)
    structlog.reset_defaults()
    structlog.configure(
        processors=[structlog.contextvars.merge_contextvars, _redact, _to_stdlib],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )


class _StderrHandler(logging.StreamHandler[Any]):
    """Writes to whatever `sys.stderr` is when a record arrives (tests swap it per test)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


class _Instance:
    """Names the instance (one service per broadcast) on every line: `instance=NAME`."""

    def __init__(self, name: str | None) -> None:
        self.name = name

    def __call__(
        self, _logger: Any, _method: str, event: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        if self.name:
            event.setdefault("instance", self.name)
        return event


def configure_logging(
    level: str = "info",
    fmt: str = "auto",
    *,
    secrets: Iterable[str] = (),
    instance: str | None = None,
) -> None:
    """Configure logging for a process (entry points only): structlog and `logging` records
    alike go to stderr, `fmt` auto (console on a TTY), json or console; `secrets` (API keys,
    tokens) are replaced by <redacted> in every line; `instance` (the settings' name of this
    service, SB_INSTANCE) is a field of every line."""
    console = fmt == "console" or (fmt == "auto" and sys.stderr.isatty())
    renderer: Any = (
        structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
        if console
        else structlog.processors.JSONRenderer()
    )
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _Instance(instance),
        _redact,
    ]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            *([] if console else [structlog.processors.format_exc_info]),
            renderer,
            _ScrubText(secrets),
        ],
    )
    handler = _StderrHandler()
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _StderrHandler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(_LEVELS.get(level, logging.INFO))
    for name in LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET)


def new_request_id() -> str:
    return uuid.uuid4().hex[:12]


@contextmanager
def bound_request(**fields: Any) -> Iterator[str]:
    """Bind a fresh request id (and fields) to every log event inside the block."""
    request_id = new_request_id()
    with structlog.contextvars.bound_contextvars(request_id=request_id, **fields):
        yield request_id


if not structlog.is_configured():
    use_library_default()
