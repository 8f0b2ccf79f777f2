"""`browse_and_search`: the one function the brain calls.

Never raises and never hangs: every failure degrades to the next provider, then to `None`
(so the brain falls back to its own search cascade), and the whole call is bounded by
`SB_CALL_DEADLINE_S`. Synchronous callers on any thread share one event-loop thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

import structlog

from browser_core import (
    BlockedUrl,
    Deadline,
    Driver,
    FailureKind,
    Hop,
    LoopThread,
    Settings,
    ToolExecutionResult,
    bound_request,
    load_settings,
    wrap_answer,
)
from search._alerts import Alerts
from search._health import ParseWatch
from search._routing import REFUSALS, Found, Mode, Registry, Walk, mode_for, walk
from search._types import (
    ACTIONS,
    CONTROLS,
    ENGINE_NAMES,
    SPECS,
    Action,
    Provider,
    Request,
    ToolContext,
)
from search.providers import (
    BingProvider,
    GeminiProvider,
    GoogleProvider,
    ReadProvider,
    YoutubeProvider,
)

log = structlog.get_logger(__name__)
# Providers that show on the broadcast.
_ON_SCREEN = frozenset({*ENGINE_NAMES, "read", "youtube"})
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def default_registry(driver: Driver, gemini: Provider | None = None) -> Registry:
    """The production providers: the search engines, the read and the player on the
    broadcast tab, and Gemini (or its stand-in, such as a recorded session's)."""
    registry = Registry()
    registry.register(GoogleProvider(driver))
    registry.register(BingProvider(driver))
    registry.register(ReadProvider(driver))
    registry.register(YoutubeProvider(driver))
    registry.register(gemini or GeminiProvider())
    return registry


def resolve(
    query: str, action: str, url: str | None, read_top: int = 0, engine: str | None = None
) -> Request:
    """Turn the LLM's parameters into a request; `auto` reads a URL, otherwise searches."""
    if action not in ACTIONS:
        raise ValueError(f"action must be one of {', '.join(ACTIONS)}, not {action!r}")
    engine = (engine or "").strip().lower() or None
    if engine is not None and engine not in ENGINE_NAMES:
        raise ValueError(f"engine must be one of {', '.join(ENGINE_NAMES)}, not {engine!r}")
    query = " ".join(_CONTROL.sub(" ", query or "").split())
    if action in CONTROLS:
        return Request(action=cast(Action, action), query=query)
    url = (url or "").strip() or None
    if action == "auto":
        looks_like_url = query.startswith(("http://", "https://")) and " " not in query
        if url is None and looks_like_url:
            url = query
        action = "read" if url else "search"
    if action == "read" and url is None:
        url = query
    return Request(
        action=cast(Action, action),
        query=query or (url or ""),
        url=url,
        read_top=read_top,
        engine=engine,
    )


@dataclass
class _Cache:
    ttl_s: float
    entries: dict[tuple[str, ...], tuple[float, ToolExecutionResult]] = field(default_factory=dict)

    def get(self, key: tuple[str, ...]) -> ToolExecutionResult | None:
        hit = self.entries.get(key)
        if hit is None or hit[0] < time.monotonic():
            self.entries.pop(key, None)
            return None
        return hit[1]

    def put(self, key: tuple[str, ...], result: ToolExecutionResult) -> None:
        if self.ttl_s > 0:
            if len(self.entries) > 256:
                self.entries.clear()
            self.entries[key] = (time.monotonic() + self.ttl_s, result)


class BrowseTool:
    """The tool with its providers, driver and cache. Async core; `call` for threads."""

    def __init__(
        self,
        settings: Settings,
        *,
        registry: Registry | None = None,
        driver: Driver | None = None,
        loop: LoopThread | None = None,
    ) -> None:
        self.settings = settings
        self.driver = driver or Driver(settings)
        self.registry = registry or default_registry(self.driver)
        self.registry.check()  # a routing entry naming an unknown provider fails here
        self.loop = loop or LoopThread()
        self.cache = _Cache(settings.cache_ttl_s)
        self.last_walk: Walk | None = None  # why the last call answered None, for the caller
        self.alerts = Alerts()  # a search engine that refused us (captcha, consent), until solved
        self.parses = ParseWatch(settings, self.alerts)  # suspect parses: alert, metric, case
        if isinstance(self.registry.providers.get("gemini"), GeminiProvider):
            _warn_if_no_login(settings)

    @property
    def outer_timeout_s(self) -> float:
        """The longest a call can take: the deadline, Gemini's floor, and a margin."""
        return self.settings.call_deadline_s + self.settings.gemini_min_s + 2.0

    async def arun(
        self,
        query: str,
        *,
        action: str = "auto",
        url: str | None = None,
        ctx: ToolContext | None = None,
        read_top: int = 0,
        engine: str | None = None,
    ) -> Walk:
        """Route one call and return the walk (result or None, and every hop); `engine`:
        search that engine alone on screen (else `SB_SEARCH_ENGINES`, in order)."""
        ctx = ctx or ToolContext()
        request = resolve(query, action, url, read_top, engine)
        mode = mode_for(self.settings, ctx)
        deadline = Deadline(self.settings.call_deadline_s)
        with bound_request(action=request.action, mode=mode):
            outcome = await self._route(request, mode, deadline)
            log.info(
                "tool.done",
                ok=outcome.result is not None,
                elapsed_ms=deadline.elapsed_ms(),
                provider=outcome.result.provider if outcome.result else None,
            )
            self.last_walk = outcome
            return outcome

    async def _route(self, request: Request, mode: Mode, deadline: Deadline) -> Walk:
        refusal = REFUSALS.get((mode, request.action))
        if refusal:
            log.info("tool.refused", reason=refusal)
            return Walk(_refused(refusal, request), [])
        if not request.query and SPECS[request.action].needs_query:
            return Walk(None, [_tool_hop(FailureKind.EMPTY_QUERY, "the query is empty")])
        if request.action == "read" and request.url:
            try:
                await self.driver.check(request.url)
            except BlockedUrl as exc:  # no provider may open it, Gemini included
                log.info("tool.refused", failure_kind=exc.kind, reason=exc.message)
                hop = Hop(
                    provider="policy",
                    ok=False,
                    elapsed_ms=0,
                    failure_kind=exc.kind,
                    detail=exc.message,
                    hint=exc.hint,
                )
                return Walk(_refused(f"I can't open that address: {exc}", request), [hop])
        key = (
            mode,
            request.action,
            request.query.lower(),
            request.url or "",
            str(request.read_top),
            request.engine or "",
        )
        # A live call is watched: it shows its answer every time (an answer from the cache
        # would leave the tab on whatever it showed, and the assistant would speak of a page
        # the audience does not see). Gemini's answers, off screen, are reused.
        cacheable = mode != "live" and request.action in ("search", "read")
        cached = self.cache.get(key) if cacheable else None
        if cached is not None:
            log.info("tool.cache_hit")
            return Walk(cached, cached.chain)
        note = await self._park_video(request, mode, deadline)
        engines = (request.engine,) if request.engine else self.settings.search_engines
        table = self.registry.table(mode, request.action, engines)
        found, chain = await walk(table, request, self.settings, deadline)
        self.alerts.observe(chain)
        self.parses.observe(table)
        if found is None:
            return Walk(None, chain)
        result = self._wrap(found, request, deadline, chain, note)
        held = any(hop.failure_kind == FailureKind.SCREEN_HELD for hop in chain)
        if result.success and cacheable and result.note is None and not held:  # of its moment
            self.cache.put(key, result)
        return Walk(result, chain)

    def _wrap(
        self, found: Found, request: Request, deadline: Deadline, chain: list[Hop], note: str | None
    ) -> ToolExecutionResult:
        """The one place an answer becomes the brain's result: the envelope, and the note
        about a parked video when the broadcast tab showed the answer (not Gemini)."""
        result = wrap_answer(
            found.answer,
            provider=found.provider,
            action=request.action,
            query=request.query,
            max_chars=self.settings.envelope_max_chars,
            elapsed_ms=deadline.elapsed_ms(),
            note=note if found.provider in _ON_SCREEN else None,
        )
        return result.model_copy(update={"chain": chain})

    async def _park_video(self, request: Request, mode: Mode, deadline: Deadline) -> str | None:
        """Before a search or read takes the broadcast tab, pause a playing video (keeping its
        place, so `resume` brings it back); the reply then says so."""
        if mode != "live" or request.action not in ("search", "read"):
            return None
        player = self.registry.providers.get("youtube")
        park = getattr(player, "park", None)
        if park is None:
            return None
        try:
            note: str | None = await park(self.settings, min(2.0, deadline.remaining() / 4))
        except Exception as exc:  # the screen may be down: the search then fails over anyway
            log.info("tool.park_failed", error=f"{type(exc).__name__}: {str(exc)[:200]}")
            return None
        return note

    async def acall(
        self,
        query: str,
        *,
        action: str = "auto",
        url: str | None = None,
        ctx: ToolContext | None = None,
        engine: str | None = None,
    ) -> ToolExecutionResult | None:
        try:
            return (await self.arun(query, action=action, url=url, ctx=ctx, engine=engine)).result
        except Exception:
            log.exception("tool.crashed")
            return None

    def call(
        self,
        query: str,
        *,
        action: str = "auto",
        url: str | None = None,
        ctx: ToolContext | None = None,
        engine: str | None = None,
    ) -> ToolExecutionResult | None:
        """Synchronous, safe from any thread; bounded by the call deadline."""
        try:
            return self.loop.run(
                self.acall(query, action=action, url=url, ctx=ctx, engine=engine),
                self.outer_timeout_s,
            )
        except TimeoutError:
            log.warning("tool.call_failed", failure_kind=FailureKind.TIMEOUT)
        except Exception as exc:
            log.error(
                "tool.call_failed",
                failure_kind=FailureKind.INTERNAL_ERROR,
                error=f"{type(exc).__name__}: {str(exc)[:200]}",
            )
        return None

    def run_sync(self, query: str, **kw: Any) -> Walk:
        """Like `call` but returns the walk (used by the CLI for the provider chain)."""
        return self.loop.run(self.arun(query, **kw), self.outer_timeout_s)

    def end_rests(self, names: Iterable[str] | None = None) -> list[str]:
        """End the rest of the search engines named (all: None) after they refused: a person
        solved the challenge in the broadcast Chrome, so the next search asks them first
        again. The names whose rest ended."""
        ended = []
        for name, provider in self.registry.providers.items():
            rest = getattr(provider, "rest", None)
            if rest is not None and (names is None or name in names) and rest.active():
                rest.clear()
                ended.append(name)
        if ended:
            log.info("tool.rest_ended", engines=ended)
        return ended

    def close(self) -> None:
        self.parses.keeper.flush(5.0)  # a case still queued is written before a CLI exits
        with contextlib.suppress(Exception):
            self.loop.run(self.driver.close(), 10)
        self.loop.stop()


def _warn_if_no_login(settings: Settings) -> None:
    from gemini import gemini_oauth_ready

    if settings.gemini_auth == "oauth" and not gemini_oauth_ready(settings):
        log.warning(
            "gemini.no_login",
            failure_kind=FailureKind.GEMINI_AUTH,
            hint="no Gemini CLI login is seeded: run `gemini` once interactively, set "
            "GEMINI_OAUTH_DIR to a seeded ~/.gemini, or use GEMINI_AUTH=apikey",
        )


def _tool_hop(kind: FailureKind, detail: str) -> Hop:
    return Hop(provider="tool", ok=False, elapsed_ms=0, failure_kind=kind, detail=detail)


def _refused(text: str, request: Request) -> ToolExecutionResult:
    return ToolExecutionResult(
        success=False,
        failure_kind=FailureKind.REFUSED,
        reply_text=text,
        provider="none",
        action=request.action,
        query=request.query,
    )


_default: BrowseTool | None = None
_default_lock = threading.Lock()


def configure(settings: Settings | None = None) -> BrowseTool:
    """Set (or reset) the settings the module-level `browse_and_search` uses."""
    with _default_lock:
        return _replace_default(settings)


def _replace_default(settings: Settings | None) -> BrowseTool:
    global _default
    if _default is not None:
        _default.close()
    _default = BrowseTool(settings or load_settings())
    return _default


def _tool() -> BrowseTool:
    with _default_lock:  # one check-and-create, so racing threads share one tool
        return _default if _default is not None else _replace_default(None)


def browse_and_search(
    query: str, *, action: str = "auto", url: str | None = None, ctx: ToolContext | None = None
) -> ToolExecutionResult | None:
    """Search, read or play for the brain; `None` when every provider failed."""
    try:
        tool = _tool()
    except Exception:
        log.exception("tool.not_configured")
        return None
    return tool.call(query, action=action, url=url, ctx=ctx)


async def abrowse_and_search(
    query: str, *, action: str = "auto", url: str | None = None, ctx: ToolContext | None = None
) -> ToolExecutionResult | None:
    """The async twin. Runs on the tool's own loop thread, so any event loop may await it
    without holding an executor thread."""
    try:
        tool = await asyncio.to_thread(_tool)  # first use builds the tool (settings, files)
        return await tool.loop.arun(
            tool.acall(query, action=action, url=url, ctx=ctx), tool.outer_timeout_s
        )
    except Exception as exc:
        log.warning("tool.call_failed", error=f"{type(exc).__name__}: {str(exc)[:200]}")
        return None
