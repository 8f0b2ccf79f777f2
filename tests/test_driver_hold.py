"""A person's hold on the broadcast tab (browser_core/driver/_hold.py) with the session's
Chromium: taken on the tab's turn, calls refused while it lasts (the walk goes on to Gemini
and its route says who holds the screen), one holder at a time, given back by hand or when
idle, and the next call goes on from the tab the person left."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from browser_core import ChromeProcess, Driver, ScreenHeld, SyncDriver
from search import BrowseTool, Registry, ToolContext
from search.providers import ReadProvider
from search.testing import FakeProvider
from tests._server import LocalServer, Reply
from tests.conftest import make_settings

LIVE = ToolContext(broadcasting=True)


async def _url(page: Any) -> str:
    return str(page.url)


def _take(drv: SyncDriver, owner: str, name: str) -> None:
    drv.call(drv.driver.take_screen(owner, name, 10), 15)


@pytest.fixture
def drv(chrome: ChromeProcess, tmp_path: Path) -> Any:
    driver = SyncDriver(make_settings(chrome, tmp_path, screen_idle_s=30))
    yield driver
    driver.shutdown()


def test_a_held_screen_refuses_calls_but_not_its_holder_and_one_person_holds_it(
    drv: SyncDriver, http: LocalServer
) -> None:
    http.route("/mine", Reply("<title>the person's page</title><p>shown by hand</p>"))
    _take(drv, "alice-id", "Alice")

    async def person(page: Any) -> str:
        await drv.driver.navigate(page, http.url("/mine"))
        return str(await page.title())

    assert drv.call(drv.driver.run("console.navigate", person, by="alice-id"), 15) == (
        "the person's page"
    )
    started = time.monotonic()
    with pytest.raises(ScreenHeld, match="held by Alice in the console"):
        drv.run("read", _url)
    assert time.monotonic() - started < 1.0, "refused at once (SB_SCREEN_WAIT_S=0)"
    with pytest.raises(ScreenHeld, match="Alice"):
        _take(drv, "bob-id", "Bob")
    assert drv.driver.hold.give_back("alice-id")
    assert drv.run("read", _url) == http.url("/mine"), "the next call finds the person's tab"


def test_a_call_waits_for_the_screen_up_to_its_bound(
    chrome: ChromeProcess, tmp_path: Path, http: LocalServer
) -> None:
    drv = SyncDriver(make_settings(chrome, tmp_path, screen_wait_s=5))
    try:
        _take(drv, "alice-id", "Alice")
        threading.Timer(0.8, drv.driver.hold.give_back, ("alice-id",)).start()
        started = time.monotonic()
        drv.run("read", _url)
        assert 0.7 < time.monotonic() - started < 4.0, "it waited for the give back"
    finally:
        drv.shutdown()


def test_an_idle_hold_comes_back_by_itself(chrome: ChromeProcess, tmp_path: Path) -> None:
    drv = SyncDriver(make_settings(chrome, tmp_path, screen_idle_s=0.6))
    released: list[str] = []
    drv.driver.hold.on_release.append(lambda holder, why: released.append(why))
    try:
        _take(drv, "alice-id", "Alice")
        with pytest.raises(ScreenHeld):
            drv.run("read", _url)
        time.sleep(0.8)
        drv.run("read", _url)
        assert released and "idle" in released[0]
    finally:
        drv.shutdown()


def test_the_route_says_who_holds_the_screen_and_the_answer_is_not_cached(
    chrome: ChromeProcess, tmp_path: Path, http: LocalServer
) -> None:
    http.route("/article", Reply("<title>Harbour</title><p>" + "The lighthouse. " * 40))
    settings = make_settings(chrome, tmp_path, cache_ttl_s=60)
    registry, driver = Registry(), Driver(settings)
    for provider in (
        ReadProvider(driver),
        FakeProvider("google"),
        FakeProvider("youtube"),
        FakeProvider("gemini"),
    ):
        registry.register(provider)
    tool = BrowseTool(settings, registry=registry, driver=driver)
    try:
        tool.loop.run(tool.driver.take_screen("alice-id", "Alice", 10), 15)
        walk = tool.run_sync(http.url("/article"), ctx=LIVE)
        assert walk.result is not None and walk.result.provider == "gemini"
        held = walk.chain[0]
        assert (held.provider, held.failure_kind) == ("read", "screen-held")
        assert "the screen is held by Alice in the console" in (held.detail or "")
        tool.driver.hold.give_back("alice-id")
        again = tool.run_sync(http.url("/article"), ctx=LIVE)
        assert again.result is not None and again.result.provider == "read", again.chain
    finally:
        tool.close()
