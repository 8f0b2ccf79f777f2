"""Recovery after an operation failed, and the error its caller gets.

A frozen Chrome and a wedged tab (a busy loop, a dialog storm) both look like a timeout: when
Chrome's HTTP endpoint still answers only our tab is stuck, and it is closed over HTTP (which
works on a spinning renderer; reconnecting would hang attaching to it); otherwise Chrome
itself is frozen and the connection is forgotten. A connection that broke mid-operation is
dropped, and the health probe says whether Chrome is gone (calls refused) or may be back.
"""

from __future__ import annotations

from typing import NoReturn

import structlog
from playwright.async_api import Error as PlaywrightError

from .._errors import CdpUnreachable, NavigationFailed, OperationTimeout
from .._settings import Settings
from ._connection import CDP_HINT, Connection
from ._health import PROBE_TIMEOUT_S, ProbeResult, probe
from ._owned_tab import OwnedTab
from ._playwright_errors import ErrorClass, classify_error, short

log = structlog.get_logger("browser_core.driver")


class Recovery:
    """Puts the connection and the owned tab right after a failure (see the docstring)."""

    def __init__(self, settings: Settings, connection: Connection, tab: OwnedTab) -> None:
        self.settings = settings
        self._connection = connection
        self._tab = tab

    async def after_timeout(self) -> None:
        """The operation ran out of time while attached: a wedged tab is closed, a frozen
        Chrome is let go."""
        result = await probe(self.settings.cdp_endpoint, PROBE_TIMEOUT_S)
        if not result.ok:
            await self._chrome_unresponsive(result)
            return
        await self._tab.close_wedged()

    async def replace_wedged_tab(self) -> None:
        """Our tab is stuck: close it over HTTP so the next step opens a blank one. When
        Chrome's endpoint does not answer either, Chrome itself is frozen: say so."""
        endpoint = self.settings.cdp_endpoint
        result = await probe(endpoint, PROBE_TIMEOUT_S)
        if not result.ok:
            await self._chrome_unresponsive(result)
            raise CdpUnreachable(
                f"Chrome at {endpoint} does not answer ({result.error})",
                hint="is it frozen or overloaded? restart it with `stream-browser chrome`",
                endpoint=endpoint,
            )
        await self._tab.close_wedged()

    async def after_unreachable(self, op: str) -> None:
        """Chrome could not be reached mid-operation: a connection that closed is dropped."""
        browser = self._connection.browser
        if browser is not None and not browser.is_connected():
            await self._lost(op, "the connection closed")

    async def after_error(self, op: str, exc: PlaywrightError) -> NoReturn:
        """A Playwright error ended the operation: drop a lost connection, then raise what
        it means (`CdpUnreachable`, `OperationTimeout` or `NavigationFailed`)."""
        kind = classify_error(exc)
        if kind is ErrorClass.CLOSED or not self._connection.connected:
            await self._lost(op, short(exc))
            kind = ErrorClass.CLOSED
        if kind is ErrorClass.CLOSED:
            raise CdpUnreachable(
                f"{op}: lost the connection to Chrome at {self.settings.cdp_endpoint}",
                hint=CDP_HINT,
                endpoint=self.settings.cdp_endpoint,
            ) from exc
        if kind is ErrorClass.TIMEOUT:
            raise OperationTimeout(f"{op}: {short(exc)}", hint="the page is slow") from exc
        raise NavigationFailed(f"{op}: {short(exc)}") from exc

    async def _chrome_unresponsive(self, result: ProbeResult) -> None:
        log.warning(
            "driver.chrome_unresponsive", endpoint=self.settings.cdp_endpoint, error=result.error
        )
        await self._connection.drop(self._tab.let_go())
        await self._connection.health.lost("Chrome did not answer", result)

    async def _lost(self, op: str, error: str) -> None:
        """The connection broke mid-operation: drop it; the health probe says whether Chrome
        is gone (refusing) or may be back at the next call."""
        await self._connection.drop(self._tab.let_go())
        await self._connection.health.lost(f"{op}: {error}")
