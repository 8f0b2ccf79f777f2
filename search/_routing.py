"""Routing as ordered data: which providers answer which action in which broadcast mode.

    mode      = "disabled" when STREAM_BROWSER=false
              = "live" when the broadcast is on (ctx.broadcasting, or the flag when None)
              = "off" otherwise
    ROUTES[(mode, action)] = provider names, tried in order; the first answer wins.

Every provider is fail-open: a `ProviderError` (or any crash) moves on to the next one, and
every hop is logged with its failure kind and elapsed time.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Literal

import structlog

from browser_core import Deadline, Hop, ProviderError, Settings, ToolExecutionResult
from search._types import Provider, Request, ToolContext

Mode = Literal["live", "off", "disabled"]
log = structlog.get_logger(__name__)

ROUTES: dict[tuple[Mode, str], tuple[str, ...]] = {
    ("live", "search"): ("google", "gemini"),
    ("live", "read"): ("read", "gemini"),
    ("live", "play"): ("youtube",),
    ("off", "search"): ("gemini",),
    ("off", "read"): ("gemini",),
    ("off", "play"): (),
    ("disabled", "search"): ("gemini",),
    ("disabled", "read"): ("gemini",),
    ("disabled", "play"): (),
}

# What a refused action says (speakable; not web content, so not in the envelope).
REFUSALS: dict[tuple[Mode, str], str] = {
    ("disabled", "play"): "Broadcasting is disabled (STREAM_BROWSER=false), so I can't play "
    "videos on the stream.",
    ("off", "play"): "The stream is not live right now, so there is no screen to play a video "
    "on. Start the broadcast and ask again.",
}

# A provider that is not last keeps this share of the remaining deadline for the rest.
FALLBACK_RESERVE = 0.4


def mode_for(settings: Settings, ctx: ToolContext) -> Mode:
    """The seed behaviour: the master flag first, then the per-request broadcast state."""
    if not settings.stream_browser:
        return "disabled"
    live = ctx.broadcasting if ctx.broadcasting is not None else settings.stream_browser
    return "live" if live else "off"


@dataclass
class Registry:
    """Provider instances by name, filled with `register()`."""

    providers: dict[str, Provider] = field(default_factory=dict)

    def register(self, provider: Provider) -> Provider:
        self.providers[provider.name] = provider
        return provider

    def table(self, mode: Mode, action: str) -> tuple[Provider, ...]:
        names = ROUTES.get((mode, action), ())
        return tuple(self.providers[n] for n in names if n in self.providers)


@dataclass
class Walk:
    """The outcome of trying a table: the answer (or None) and every hop."""

    result: ToolExecutionResult | None
    chain: list[Hop]


async def walk(
    table: tuple[Provider, ...], request: Request, settings: Settings, deadline: Deadline
) -> Walk:
    """Try each provider in order until one answers or the deadline passes."""
    chain: list[Hop] = []
    for index, provider in enumerate(table):
        remaining = deadline.remaining()
        if remaining <= 0.05:
            chain.append(
                Hop(
                    provider=provider.name,
                    ok=False,
                    elapsed_ms=0,
                    failure_kind="deadline",
                    detail="no time left",
                )
            )
            break
        last = index == len(table) - 1
        budget = remaining if last else remaining * (1 - FALLBACK_RESERVE)
        hop, result = await _try(provider, request, settings, Deadline(budget))
        chain.append(hop)
        log.info(
            "route.hop",
            provider=provider.name,
            ok=hop.ok,
            failure_kind=hop.failure_kind,
            elapsed_ms=hop.elapsed_ms,
            action=request.action,
        )
        if result is not None:
            return Walk(result.model_copy(update={"chain": chain}), chain)
    return Walk(None, chain)


async def _try(
    provider: Provider, request: Request, settings: Settings, budget: Deadline
) -> tuple[Hop, ToolExecutionResult | None]:
    started = time.monotonic()

    def hop(ok: bool, kind: str | None = None, detail: str | None = None) -> Hop:
        return Hop(
            provider=provider.name,
            ok=ok,
            failure_kind=kind,
            detail=detail,
            elapsed_ms=int((time.monotonic() - started) * 1000),
        )

    try:
        result = await asyncio.wait_for(
            provider.run(request, settings, budget), budget.remaining() + 0.5
        )
    except ProviderError as exc:
        return hop(False, exc.kind, str(exc)[:300]), None
    except TimeoutError:
        return hop(False, "timeout", "the provider passed its share of the deadline"), None
    except Exception as exc:
        log.exception("route.provider_crashed", provider=provider.name)
        return hop(False, "internal-error", f"{type(exc).__name__}: {str(exc)[:200]}"), None
    return hop(True), result
