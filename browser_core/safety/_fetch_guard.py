"""The CDP-level request guard: the second layer behind the egress guard proxy.

Playwright's request routes never see redirect hops, so a public page answering
`302 Location: http://127.0.0.1:P/` used to reach the internal server before anything could
refuse it. The CDP `Fetch` domain does pause every hop before it is sent: this guard pauses
every document request (navigations, frames, redirect hops, meta refresh, `location=`) and
every request to a host that looks internal, and refuses what the navigation policy refuses.
A refused document gets a short local 403 page (so nothing is sent and the driver then sees
where the page tried to go); a refused sub-request fails as blocked by the client. Names are
not resolved here (that is the proxy's job, after resolution).

It also answers HTTP sign-in challenges (`401 WWW-Authenticate: Basic`, page or iframe) of
the requests it pauses by cancelling them (`Fetch.authRequired`), so Chrome's "Sign in"
dialog never reaches the broadcast screen; the page shows its own 401 body.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections import deque
from collections.abc import Iterable
from typing import Any

import structlog
from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from .._background import in_background
from ._policy import is_allowed

log = structlog.get_logger("browser_core.fetch_guard")

# Chrome pauses a request when its canonical URL matches (`*` any run, `?` one character).
# Over-matching only costs a round trip: the policy decides. A name with a trailing dot is the
# same host to Chrome.
_INTERNAL_NAMES = ("localhost", "local", "internal", "lan", "home.arpa")
_INTERNAL_PATTERNS = (
    "*://localhost*",
    "*://127.*",
    "*://10.*",
    "*://172.*",
    "*://192.168.*",
    "*://169.254.*",
    "*://100.*",
    "*://0.*",
    "*://[*",
    *(
        f"*.{name}{dot}{end}"
        for name in _INTERNAL_NAMES
        for dot in ("", ".")
        for end in ("/*", ":*")
    ),
    *(f"*://metadata{dot}{end}" for dot in ("", ".") for end in ("/*", ":*")),
    "*://instance-data*",
)
PATTERNS = (
    {"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"},
    *({"urlPattern": p, "requestStage": "Request"} for p in _INTERNAL_PATTERNS),
)
BLOCKED_KEPT = 64  # a tab guarded for days refuses without end: only the latest are kept
_NOTICE = base64.b64encode(
    b"<!DOCTYPE html><title>Blocked</title><p>This address is not shown on the stream.</p>"
).decode("ascii")


class FetchGuard:
    """Pauses matching requests of a browser over its own CDP session and decides on each."""

    def __init__(self, session: CDPSession, allow_hosts: Iterable[str]) -> None:
        self.session = session
        self.allow_hosts = tuple(allow_hosts)
        self.blocked: deque[str] = deque(maxlen=BLOCKED_KEPT)  # the latest refusals
        self._tasks: set[asyncio.Task[None]] = set()

    def on_auth(self, event: dict[str, Any]) -> None:
        in_background(self._tasks, self._cancel_auth(event))

    async def _cancel_auth(self, event: dict[str, Any]) -> None:
        url = str(event.get("request", {}).get("url", ""))
        log.info("driver.auth_cancelled", url=url[:200])
        with contextlib.suppress(PlaywrightError):  # the page navigated away or closed
            await self.session.send(
                "Fetch.continueWithAuth",
                {
                    "requestId": event["requestId"],
                    "authChallengeResponse": {"response": "CancelAuth"},
                },
            )

    def on_paused(self, event: dict[str, Any]) -> None:
        in_background(self._tasks, self._decide(event))

    async def _decide(self, event: dict[str, Any]) -> None:
        request_id = event["requestId"]
        url = str(event.get("request", {}).get("url", ""))
        try:
            if is_allowed(url, self.allow_hosts):
                await self.session.send("Fetch.continueRequest", {"requestId": request_id})
                return
            self.blocked.append(url)
            kind = str(event.get("resourceType", ""))
            log.warning("driver.fetch_blocked", url=url[:200], resource_type=kind)
            if kind == "Document":
                await self.session.send(
                    "Fetch.fulfillRequest",
                    {
                        "requestId": request_id,
                        "responseCode": 403,
                        "responseHeaders": [
                            {"name": "Content-Type", "value": "text/html; charset=utf-8"},
                            {"name": "Cache-Control", "value": "no-store"},
                        ],
                        "body": _NOTICE,
                    },
                )
            else:
                await self.session.send(
                    "Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"}
                )
        except PlaywrightError:
            pass  # the page navigated away or closed: the request is gone with it


_GUARD_ATTR = "_stream_browser_fetch_guard"  # one guard per connected browser object


async def install_fetch_guard(page: Page, allow_hosts: Iterable[str]) -> FetchGuard:
    """Guard every request of the browser `page` belongs to, at the CDP Fetch level, from a
    browser session kept as long as the connection (the first call per connection opens it;
    later ones return the same guard). A browser session sees every tab and every frame,
    a cross-site frame in its own renderer included, and gets each sign-in challenge before
    Playwright's routes can answer it "Default" (Chrome's dialog)."""
    browser = page.context.browser
    assert browser is not None  # a page of a connected browser
    guard: FetchGuard | None = getattr(browser, _GUARD_ATTR, None)
    if guard is not None:
        return guard
    session = await browser.new_browser_cdp_session()
    guard = FetchGuard(session, allow_hosts)
    session.on("Fetch.requestPaused", guard.on_paused)
    session.on("Fetch.authRequired", guard.on_auth)
    await session.send("Fetch.enable", {"patterns": list(PATTERNS), "handleAuthRequests": True})
    setattr(browser, _GUARD_ATTR, guard)  # carried by the browser: it goes with the connection
    return guard
