"""Closing a tab that keeps navigating (a meta-refresh ping-pong), with the driver attached,
on a headful Chromium of this module's own display (where the lost close shows: measured on
Chromium 156, a plain `page.close()` waited for good in about one close in three).

The cause is Chrome's, not the Fetch guard's: `Target.closeTarget` answers `success` and runs
the page's unload on the document it finds; when the page's own next navigation commits at
that moment the close is lost and the tab navigates on (with no driver attached and no Fetch
guard too). `browser_core._close.close_page` stills such a tab (a blank document) and closes
it again; the driver closes every page it closes that way.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from bench._common.display import Display
from browser_core import ChromeProcess, SyncDriver, cdp_targets, launch_chrome, stop_pid
from browser_core.chrome import free_port
from browser_core.driver._close import close_page
from tests._server import LocalServer, Reply
from tests.conftest import make_settings

RUNS = 20


@pytest.fixture(scope="module")
def headful(
    server: LocalServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ChromeProcess]:
    display = Display()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("DISPLAY", display.name)
        proc = launch_chrome(
            port=free_port(),
            user_data_dir=str(tmp_path_factory.mktemp("closing-profile")),
            headless=False,
            window=display.size,
            allow_hosts=(f"127.0.0.1:{server.port}",),
        )
    yield proc
    stop_pid(proc.pid)
    display.close()


@pytest.fixture
def ping_pong(http: LocalServer) -> str:
    a, b = http.url("/close-ping"), http.url("/close-pong")
    http.route("/close-ping", Reply(f"<meta http-equiv=refresh content='0;url={b}'><p>ping"))
    http.route("/close-pong", Reply(f"<meta http-equiv=refresh content='0;url={a}'><p>pong"))
    return a


@pytest.mark.slow
def test_a_page_that_keeps_navigating_closes_long_before_its_timeout_with_the_driver_attached(
    headful: ChromeProcess, http: LocalServer, ping_pong: str, tmp_path: Any
) -> None:
    drv = SyncDriver(make_settings(headful, tmp_path))

    def tabs() -> set[str]:
        return {t["id"] for t in cdp_targets(headful.endpoint) if t.get("type") == "page"}

    async def op(owned: Any) -> tuple[set[str], list[float]]:
        before_all, took = await asyncio.to_thread(tabs), []
        for run in range(RUNS):
            page = await owned.context.new_page()
            await page.goto(ping_pong)
            before = len(http.requests)
            await asyncio.sleep(0.2 + 0.05 * (run % 5))  # the close lands anywhere in a hop
            assert len(http.requests) > before or run, "the page does not keep navigating"
            started = time.monotonic()
            closed = await close_page(page, timeout=5.0)
            took.append(time.monotonic() - started)
            assert closed and page.is_closed(), run
        return before_all, took

    try:
        before, took = drv.run("close", op, timeout=RUNS * 8)
        # a lost close waits out its whole 5 s timeout; a stilled one takes a fraction of a
        # second (0.02-0.4 s quiet; 1.1 s seen once in a fresh clone's make test at a load of 12)
        assert max(took) < 2.5, [round(t, 2) for t in took]
        assert tabs() == before  # none of the closed tabs is left on the strip
    finally:
        drv.shutdown()
