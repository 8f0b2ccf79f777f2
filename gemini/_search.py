"""The public Gemini entry points: raising `ask*` for the routing layer, fail-open `*search`.

`acli_search`/`arest_search`/`asearch` (and their sync twins) never raise: any failure is
logged as `gemini.failed` with its `failure_kind` and they return None.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import structlog

from browser_core import Answer, FailureKind, Settings, ToolExecutionResult, wrap_answer

from ._cli import ask_cli
from ._errors import GeminiError
from ._models import GeminiAnswer, render_answer
from ._rest import ask_rest
from ._sync import run_sync

log = structlog.get_logger("gemini")

Asker = Callable[[str, Settings], Awaitable[GeminiAnswer]]
PROVIDERS: dict[str, str] = {"oauth": "gemini-cli", "apikey": "gemini-api"}


def provider_name(auth: str) -> str:
    """ "gemini-cli" for the account login, "gemini-api" for the API key."""
    return PROVIDERS[auth]


def _asker(auth: str) -> Asker:
    return ask_cli if auth == "oauth" else ask_rest


async def ask(query: str, settings: Settings) -> GeminiAnswer:
    """Ask Gemini by `GEMINI_AUTH`; raises a GeminiError leaf (for the routing layer)."""
    return await _asker(settings.gemini_auth)(query, settings)


def to_result(
    answer: GeminiAnswer, settings: Settings, query: str, elapsed_ms: int
) -> ToolExecutionResult:
    """The brain-facing envelope for an answer."""
    return wrap_answer(
        answer_of(answer),
        provider=provider_name(answer.auth),
        action="search",
        query=query,
        max_chars=settings.envelope_max_chars,
        elapsed_ms=elapsed_ms,
    )


def answer_of(answer: GeminiAnswer) -> Answer:
    """A Gemini answer as a provider's `Answer` (named for the path that gave it)."""
    return Answer(
        render_answer(answer),
        answer.sources,
        {"search_queries": answer.search_queries, "model": answer.model},
        by=provider_name(answer.auth),
    )


def _elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


async def _fail_open(
    ask_with: Asker, auth: str, query: str, settings: Settings
) -> ToolExecutionResult | None:
    provider, started = provider_name(auth), time.monotonic()
    try:
        answer = await ask_with(query, settings)
    except GeminiError as exc:
        log.warning(
            "gemini.failed",
            provider=provider,
            failure_kind=exc.kind,
            error=exc.message,
            hint=exc.hint,
            elapsed_ms=_elapsed_ms(started),
        )
        return None
    except Exception as exc:  # fail open: the caller must never see an exception
        log.error(
            "gemini.failed",
            provider=provider,
            failure_kind=FailureKind.GEMINI_INTERNAL,
            error_type=type(exc).__name__,
            elapsed_ms=_elapsed_ms(started),
        )
        return None
    elapsed = _elapsed_ms(started)
    log.info(
        "gemini.completed",
        provider=provider,
        model=answer.model,
        sources=len(answer.sources),
        elapsed_ms=elapsed,
    )
    return to_result(answer, settings, query, elapsed)


async def acli_search(query: str, settings: Settings) -> ToolExecutionResult | None:
    """Gemini CLI (account login); None on any failure."""
    return await _fail_open(ask_cli, "oauth", query, settings)


async def arest_search(query: str, settings: Settings) -> ToolExecutionResult | None:
    """Gemini REST API (key); None on any failure."""
    return await _fail_open(ask_rest, "apikey", query, settings)


async def asearch(query: str, settings: Settings) -> ToolExecutionResult | None:
    """The transport chosen by `GEMINI_AUTH`; None on any failure."""
    auth = settings.gemini_auth
    return await _fail_open(_asker(auth), auth, query, settings)


def cli_search(query: str, settings: Settings) -> ToolExecutionResult | None:
    """Sync twin of `acli_search`."""
    return _twin(acli_search(query, settings), settings)


def rest_search(query: str, settings: Settings) -> ToolExecutionResult | None:
    """Sync twin of `arest_search`."""
    return _twin(arest_search(query, settings), settings)


def search(query: str, settings: Settings) -> ToolExecutionResult | None:
    """Sync twin of `asearch`."""
    return _twin(asearch(query, settings), settings)


def _twin(
    coro: Coroutine[Any, Any, ToolExecutionResult | None], settings: Settings
) -> ToolExecutionResult | None:
    """Run an async search from sync code, bounded by the Gemini timeout plus the CLI's kill
    grace; fail open like the async calls."""
    bound = max(settings.gemini_timeout_s, settings.gemini_rest_timeout_s) + 10.0
    try:
        return run_sync(coro, bound)
    except Exception as exc:  # the bridge's own timeout: never an exception to the caller
        log.error("gemini.failed", failure_kind=FailureKind.GEMINI_TIMEOUT, error=str(exc))
        return None
