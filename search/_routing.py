"""Routing as ordered data: which providers answer which action in which broadcast mode.

    mode      = "disabled" when STREAM_BROWSER=false
              = "live" when the broadcast is on (ctx.broadcasting, or the flag when None)
              = "off" otherwise
    ROUTES[(mode, action)] = provider names, tried in order; the first answer wins.

Every provider is fail-open: a `ProviderError` (or any crash) moves on to the next one, and
every hop is logged with its failure kind, message, fix and elapsed time. Gemini keeps a time
floor (`GEMINI_MIN_S`) inside the call deadline, so a slow screen never starves the fallback.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import structlog

from browser_core import (
    Answer,
    Deadline,
    FailureKind,
    Hop,
    ProviderError,
    Settings,
    ToolExecutionResult,
)
from search._types import ACTION_SPECS, CONTROLS, ENGINE_NAMES, Provider, Request, ToolContext

Mode = Literal["live", "off", "disabled"]
log = structlog.get_logger(__name__)

_LIVE_PLAYER = ("youtube",)
# The web search engines on the broadcast tab, as a route names them: the call's table holds
# the ones `SB_SEARCH_ENGINES` names (or the one the brain asked for), in that order, where
# the route names the first of them.
ENGINES = ENGINE_NAMES
ROUTES: dict[tuple[Mode, str], tuple[str, ...]] = {
    ("live", "search"): ("google", "bing", "gemini"),
    ("live", "read"): ("read", "gemini"),
    ("live", "play"): _LIVE_PLAYER,
    **{("live", control): _LIVE_PLAYER for control in sorted(CONTROLS)},
    ("off", "search"): ("gemini",),
    ("off", "read"): ("gemini",),
    ("off", "status"): _LIVE_PLAYER,  # status always answers: it only looks at the screen
    ("disabled", "search"): ("gemini",),
    ("disabled", "read"): ("gemini",),
}

_NOT_LIVE = (
    "The stream is not live right now, so there is no screen to {what}. Start the broadcast "
    "and ask again."
)
_DISABLED = "Broadcasting is disabled (STREAM_BROWSER=false), so I can't {what} on the stream."
_WHAT = {
    "play": "play a video",
    "pause": "pause a video",
    "resume": "resume a video",
    "stop": "stop a video",
    "status": "show anything",
}
# What a refused action says (speakable; not web content, so not in the envelope).
REFUSALS: dict[tuple[Mode, str], str] = {
    **{("off", a): _NOT_LIVE.format(what=w) for a, w in _WHAT.items() if a != "status"},
    **{("disabled", a): _DISABLED.format(what=w) for a, w in _WHAT.items()},
}

# A broadcast Chrome that does not answer, or a screen a person holds, is gone for every
# search engine: the walk goes on to Gemini without asking the next engine.
_SCREEN_GONE = frozenset({FailureKind.CDP_UNREACHABLE, FailureKind.SCREEN_HELD})
# A provider that is not last keeps this share of the remaining deadline for the rest.
FALLBACK_RESERVE = 0.4
# Providers that keep `GEMINI_MIN_S` for themselves when they come later in a table.
FLOORED = frozenset({"gemini"})
# Below this, a browser hop is not worth starting: it keeps its plain share instead.
_MIN_BROWSER_S = 2.0


def mode_for(settings: Settings, ctx: ToolContext) -> Mode:
    """The seed behaviour: the master flag first, then the per-request broadcast state."""
    if not settings.stream_browser:
        return "disabled"
    live = ctx.broadcasting if ctx.broadcasting is not None else settings.stream_browser
    return "live" if live else "off"


def check_routes(providers: dict[str, Provider]) -> None:
    """Raise on a routing entry naming a provider, or an action, that does not exist."""
    actions = {spec.name for spec in ACTION_SPECS}
    for mode, action in (*ROUTES, *REFUSALS):
        if action not in actions:
            raise ValueError(f"routing table: unknown action {action!r} for mode {mode!r}")
    for (mode, action), names in ROUTES.items():
        for name in names:
            provider = providers.get(name)
            if provider is None and name in ENGINES:
                continue  # an engine left out of a registry is left out of its routes
            if provider is None:
                known = ", ".join(sorted(providers)) or "none"
                raise ValueError(
                    f"routing table: ({mode}, {action}) names provider {name!r}, which is not "
                    f"registered (registered: {known})"
                )
            if action not in provider.actions:
                raise ValueError(
                    f"routing table: provider {name!r} does not declare action {action!r}"
                )


@dataclass
class Registry:
    """Provider instances by name, filled with `register()`; checked against `ROUTES`."""

    providers: dict[str, Provider] = field(default_factory=dict)

    def register(self, provider: Provider) -> Provider:
        self.providers[provider.name] = provider
        return provider

    def check(self) -> None:
        check_routes(self.providers)

    def table(
        self, mode: Mode, action: str, engines: Sequence[str] = ENGINES
    ) -> tuple[Provider, ...]:
        """The providers of a call, in order; the route's search engines are `engines`, in
        their order (those registered)."""
        names: list[str] = []
        for name in ROUTES.get((mode, action), ()):
            if name not in ENGINES:
                names.append(name)
            elif not any(n in ENGINES for n in names):
                names += [e for e in engines if e in ENGINES]
        return tuple(self.providers[n] for n in names if n in self.providers)


@dataclass
class Walk:
    """The outcome of a call: the result the brain receives (or None) and every hop."""

    result: ToolExecutionResult | None
    chain: list[Hop]


@dataclass(frozen=True)
class Found:
    """The answer a table walk ended with, and the registry name of the provider that gave it."""

    provider: str
    answer: Answer


def hop_budget(table: tuple[Provider, ...], index: int, remaining: float, floor: float) -> float:
    """The time one provider gets: the last takes all that is left (and at least the floor,
    if it is floored); an earlier one leaves a share, and the floor for a floored successor."""
    provider = table[index]
    if index == len(table) - 1:
        return max(remaining, floor) if provider.name in FLOORED else remaining
    share = remaining * (1 - FALLBACK_RESERVE)
    if any(p.name in FLOORED for p in table[index + 1 :]):
        after_floor = remaining - floor
        if after_floor >= _MIN_BROWSER_S:
            return min(share, after_floor)
    return share


async def walk(
    table: tuple[Provider, ...], request: Request, settings: Settings, deadline: Deadline
) -> tuple[Found | None, list[Hop]]:
    """Try each provider in order until one answers or the deadline (and floor) passes."""
    chain: list[Hop] = []
    floor = settings.gemini_min_s
    screen_gone = False
    for index, provider in enumerate(table):
        if screen_gone and provider.name in ENGINES:
            continue  # the same screen for every engine: no use asking the next one
        remaining = deadline.remaining()
        if remaining <= 0.05 and not (provider.name in FLOORED and floor > 0):
            chain.append(_no_time(provider.name))
            break
        budget = hop_budget(table, index, remaining, floor)
        hop, answer = await _try(provider, request, settings, Deadline(budget))
        chain.append(hop)
        log.info(
            "route.hop",
            provider=provider.name,
            ok=hop.ok,
            failure_kind=hop.failure_kind,
            error=hop.detail,
            hint=hop.hint,
            elapsed_ms=hop.elapsed_ms,
            action=request.action,
        )
        if answer is not None:
            return Found(provider.name, answer), chain
        screen_gone = screen_gone or hop.failure_kind in _SCREEN_GONE
    return None, chain


def _no_time(name: str) -> Hop:
    return Hop(
        provider=name,
        ok=False,
        elapsed_ms=0,
        failure_kind=FailureKind.DEADLINE,
        detail="no time left in the call deadline",
        hint="raise SB_CALL_DEADLINE_S",
    )


def _timeout_kind(provider: Provider) -> FailureKind:
    return FailureKind.GEMINI_TIMEOUT if provider.name in FLOORED else FailureKind.TIMEOUT


async def _try(
    provider: Provider, request: Request, settings: Settings, budget: Deadline
) -> tuple[Hop, Answer | None]:
    started = time.monotonic()

    def hop(
        ok: bool,
        kind: FailureKind | None = None,
        detail: str | None = None,
        hint: str | None = None,
    ) -> Hop:
        return Hop(
            provider=provider.name,
            ok=ok,
            failure_kind=kind,
            detail=detail,
            hint=hint,
            elapsed_ms=int((time.monotonic() - started) * 1000),
        )

    try:
        answer = await asyncio.wait_for(
            provider.run(request, settings, budget), budget.remaining() + 0.5
        )
    except ProviderError as exc:
        kind = exc.kind
        if kind == FailureKind.TIMEOUT:  # one kind per cause, whichever timer fired
            kind = _timeout_kind(provider)
        return hop(False, kind, exc.message[:300], exc.hint and exc.hint[:300]), None
    except TimeoutError:
        return hop(
            False,
            _timeout_kind(provider),
            f"{provider.name} did not answer within its {budget.seconds:.1f} s share of the "
            "call deadline",
            "raise SB_CALL_DEADLINE_S (or GEMINI_MIN_S for Gemini)",
        ), None
    except Exception as exc:
        log.exception("route.provider_crashed", provider=provider.name)
        return hop(
            False, FailureKind.INTERNAL_ERROR, f"{type(exc).__name__}: {str(exc)[:200]}"
        ), None
    if answer.failure_kind is not None:  # a hearable failure (a video that did not start)
        return hop(False, answer.failure_kind), answer  # ends the walk: the brain says so
    return hop(True, detail=answer.detail), answer  # ok, with its caveat if it has one
