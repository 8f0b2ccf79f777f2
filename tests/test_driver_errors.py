"""How the driver reads Playwright errors: by type first, then the one table of text markers.

Every row of `ERROR_MARKERS` has a test that makes the real error on a real Chromium and
checks both that the marker is still in Playwright's message and how it is classified: when a
Playwright upgrade changes a message, the row's test fails instead of the driver going wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from browser_core import SyncDriver
from browser_core.driver._document import document_html
from browser_core.driver._playwright_errors import ERROR_MARKERS, ErrorClass, classify_error
from tests._server import LocalServer, Reply

Trigger = Callable[[Any, LocalServer], Awaitable[None]]


async def _download(page: Any, http: LocalServer) -> None:
    url = http.route(
        "/file.bin",
        Reply(
            b"\0" * 100,
            content_type="application/octet-stream",
            headers={"Content-Disposition": "attachment"},
        ),
    )
    await page.goto(url)


async def _no_content(page: Any, http: LocalServer) -> None:
    await page.goto(http.route("/204", Reply("", status=204)))


async def _crashed_renderer(page: Any, http: LocalServer) -> None:
    with pytest.raises(PlaywrightError):
        await page.goto("chrome://crash", timeout=5000)
    await page.evaluate("1")


async def _object_of_a_closed_page(page: Any, http: LocalServer) -> None:
    await page.close()
    await page.context.new_cdp_session(page)


async def _content_while_the_page_moves(page: Any, http: LocalServer) -> None:
    # Two long pages that send each other on at once: a read lands on a document's commit.
    words = "<p>" + "word " * 40_000
    a, b = http.url("/ping"), http.url("/pong")
    http.route("/ping", Reply(f"<meta http-equiv=refresh content='0;url={b}'>{words}"))
    http.route("/pong", Reply(f"<meta http-equiv=refresh content='0;url={a}'>{words}"))
    await page.goto(a)
    try:
        for _ in range(500):
            await page.content()
    finally:  # end the ping-pong: a page that keeps moving is slow to close
        http.route("/ping", Reply("<p>still"))
        http.route("/pong", Reply("<p>still"))
        await page.wait_for_function("!document.querySelector('meta')", timeout=5000)


async def _goto_while_the_page_moves_itself(page: Any, http: LocalServer) -> None:
    # Two short pages that send each other on at once (a meta refresh), on two sites (each
    # hop swaps the renderer, which widens the moment between the page's own next document
    # being ready and its commit): a goto of ours made in that moment waits behind it, and
    # Playwright sees another document commit first. Our goto is aimed at every point of a
    # hop in turn, until the error comes or the time is up (a loaded machine hops slower).
    a = http.url("/int-ping")
    b = f"http://localhost:{http.port}/int-pong"
    http.route("/int-ping", Reply(f"<meta http-equiv=refresh content='0;url={b}'>ping"))
    http.route("/int-pong", Reply(f"<meta http-equiv=refresh content='0;url={a}'>pong"))
    there = http.route("/int-there", Reply("<p>there"))
    until = time.monotonic() + 15.0
    try:
        attempt = 0
        while time.monotonic() < until:
            await page.goto(a, wait_until="commit")
            await asyncio.sleep(0.01 * (attempt % 23))
            attempt += 1
            with contextlib.suppress(PlaywrightTimeoutError):
                await page.goto(there, wait_until="commit", timeout=5000)
    finally:  # end the ping-pong: its tab closes at once then
        http.route("/int-ping", Reply("<p>still"))
        http.route("/int-pong", Reply("<p>still"))


# One real trigger per row of ERROR_MARKERS (a row without one fails its test).
TRIGGERS: dict[str, Trigger] = {
    "Download is starting": _download,
    "net::ERR_ABORTED": _no_content,
    "Target crashed": _crashed_renderer,
    "no object with guid": _object_of_a_closed_page,
    "page is navigating and changing the content": _content_while_the_page_moves,
    "is interrupted by another navigation": _goto_while_the_page_moves_itself,
}


def real_error(drv: SyncDriver, http: LocalServer, trigger: Trigger) -> BaseException:
    """Run `trigger` on a scratch tab of the session's Chrome; the Playwright error it raised."""

    async def op(owned: Any) -> BaseException:
        page = await owned.context.new_page()
        try:
            await trigger(page, http)
        except PlaywrightError as exc:
            return exc
        finally:
            if not page.is_closed():
                await page.close()
        raise AssertionError("the trigger raised no Playwright error")

    result = drv.run("trigger", op, timeout=20)
    assert isinstance(result, BaseException)
    return result


@pytest.mark.parametrize(("marker", "kind"), ERROR_MARKERS, ids=[m for m, _ in ERROR_MARKERS])
def test_each_text_marker_is_in_the_real_error_and_classified_by_its_row(
    sync_driver: SyncDriver, http: LocalServer, marker: str, kind: ErrorClass
) -> None:
    exc = real_error(sync_driver, http, TRIGGERS[marker])
    assert marker in str(exc)
    assert classify_error(exc) is kind


@pytest.mark.parametrize(("marker", "kind"), ERROR_MARKERS, ids=[m for m, _ in ERROR_MARKERS])
def test_each_row_classifies_a_plain_error_carrying_its_marker(
    marker: str, kind: ErrorClass
) -> None:
    assert classify_error(PlaywrightError(f"Page.goto: {marker} at http://x/")) is kind


def test_a_playwright_timeout_is_a_timeout_by_type_whatever_its_text(
    sync_driver: SyncDriver,
) -> None:
    async def op(page: Any) -> BaseException:
        try:
            await page.wait_for_selector("#never-there", timeout=50)
        except PlaywrightError as exc:
            return exc
        raise AssertionError("no timeout")

    exc = sync_driver.run("wait", op)
    assert isinstance(exc, PlaywrightTimeoutError)
    assert classify_error(exc) is ErrorClass.TIMEOUT
    assert classify_error(PlaywrightTimeoutError("net::ERR_ABORTED")) is ErrorClass.TIMEOUT


def test_a_closed_page_is_closed_by_the_error_name(sync_driver: SyncDriver) -> None:
    async def op(owned: Any) -> BaseException:
        page = await owned.context.new_page()
        await page.close()
        try:
            await page.evaluate("1")
        except PlaywrightError as exc:
            return exc
        raise AssertionError("no error from a closed page")

    exc = sync_driver.run("closed", op)
    assert exc.name == "TargetClosedError"
    assert classify_error(exc) is ErrorClass.CLOSED


def test_text_that_only_looks_like_a_timeout_or_a_close_is_other() -> None:
    # The old text guesses ("Timeout", "has been closed", "disconnected") are gone.
    for text in ("Timeout while reading", "the dialog has been closed", "user disconnected"):
        assert classify_error(PlaywrightError(text)) is ErrorClass.OTHER
    assert classify_error(ValueError("net::ERR_NAME_NOT_RESOLVED")) is ErrorClass.OTHER


def test_the_html_of_a_page_that_moves_itself_is_read_where_it_went(
    sync_driver: SyncDriver, http: LocalServer
) -> None:
    # Each hop is long enough that reading it takes a while, and moves on once parsed: a
    # plain page.content() lands on a commit and fails; document_html reads the next one.
    words = "<p>" + "word " * 40_000
    last = http.route("/hop3", Reply("<title>Arrived</title><p>arrived"))
    hops = [last]
    for n in (2, 1):
        moving = Reply(f"<meta http-equiv=refresh content='0;url={hops[0]}'>{words}")
        hops.insert(0, http.route(f"/hop{n}", moving))

    async def op(owned: Any) -> list[str]:
        page = await owned.context.new_page()
        try:
            seen = []
            for _ in range(5):
                await page.goto(hops[0])
                seen.append(await document_html(page))
            await page.wait_for_url(last)
            return seen
        finally:
            await page.close()

    seen = sync_driver.run("hops", op, timeout=30)
    assert len(seen) == 5 and all("word word" in html or "arrived" in html for html in seen)
