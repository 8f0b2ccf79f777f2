"""The early body (`browser_core/driver/_early_body.py`) over the driver's own CDP socket
(`_cdp_channel.py`), on the session's real Chromium and the local server: a large page's body
arrives whole and the same as the tab's, once; a body that never ends is given up on; what is
not ours to take is let go; without the socket, Playwright's session does the same."""

from __future__ import annotations

import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from browser_core import SyncDriver
from browser_core.driver import _early_body
from browser_core.driver._early_body import WAIT_S
from tests._serp_pages import page_2026
from tests._server import LocalServer, Reply

LAST_WORDS = "the last words of the page"


@pytest.fixture(scope="module")
def big_page() -> str:
    """The bench's 2026 results page (1.76 MB), with a marker at its very end."""
    page = page_2026("why is the sky blue", padding_kb=1700)
    return page.replace("</body>", f'<p id="last">{LAST_WORDS}</p></body>')


@pytest.fixture
def drv(settings: Any) -> Iterator[SyncDriver]:
    driver = SyncDriver(settings)
    yield driver
    driver.shutdown()


def _open(drv: SyncDriver, url: str, *, show: bool = True) -> dict[str, Any]:
    """Open `url` as a search does ("commit"); what the answer got and what the tab shows."""

    async def op(page: Any) -> dict[str, Any]:
        started = time.monotonic()
        outcome = await drv.driver.navigate(page, url, wait_until="commit")
        took = time.monotonic() - started
        catcher = _early_body._CATCHERS.get(page)
        raw = catcher is not None and catcher.raw is not None and catcher.raw.alive
        shown = ""
        if show and not outcome.download:
            await page.wait_for_load_state("domcontentloaded")
            shown = await page.evaluate(
                "() => (document.getElementById('last') || document.body).textContent"
            )
        return {"outcome": outcome, "took": took, "raw": raw, "shown": shown, "url": page.url}

    return dict(drv.run("read", op))


def _close_channel(drv: SyncDriver) -> None:
    async def op(page: Any) -> None:
        channel = await drv.driver._connection.cdp_channel()
        assert channel is not None
        await channel.close()

    drv.run("read", op)


def test_a_large_page_arrives_whole_over_the_drivers_socket_and_the_tab_shows_it(
    drv: SyncDriver, http: LocalServer, big_page: str
) -> None:
    url = http.route("/big", Reply(big_page))
    seen = _open(drv, url)
    assert seen["raw"], "the body came over the driver's own socket"
    assert seen["outcome"].body == big_page  # whole, and the same bytes the server sent
    assert seen["shown"] == LAST_WORDS  # the tab got the whole page too
    assert http.requests.count("/big") == 1  # taken on the way, not fetched again


def test_the_socket_closed_is_opened_again_and_without_it_the_page_session_takes_the_body(
    drv: SyncDriver, http: LocalServer, big_page: str
) -> None:
    url = http.route("/big", Reply(big_page))
    assert _open(drv, url)["raw"]
    _close_channel(drv)  # as when the socket fails: the next navigation opens another
    again = _open(drv, url)
    assert again["raw"] and again["outcome"].body == big_page
    _close_channel(drv)
    drv.driver._connection._channel_failed_at = time.monotonic()  # as if it could not open
    fallback = _open(drv, url)
    assert not fallback["raw"]
    assert fallback["outcome"].body == big_page and fallback["shown"] == LAST_WORDS
    assert http.requests.count("/big") == 3


def test_a_body_that_never_ends_is_given_up_on_within_the_wait_and_the_next_page_is_read(
    drv: SyncDriver, http: LocalServer
) -> None:
    ends: list[float] = []
    url = http.route("/endless", lambda handler: _endless(handler, ends))
    started = time.monotonic()
    seen = _open(drv, url, show=False)  # its page never ends loading
    assert seen["outcome"].body is None  # not held for an answer: the tab reads it itself
    assert seen["took"] < WAIT_S + 4.0
    # Chrome let the first request go (it held the whole body in memory until then)
    assert ends and ends[0] - started < WAIT_S + 4.0
    plain = http.route("/plain", Reply(f"<title>plain</title><p id=last>{LAST_WORDS}</p>"))
    after = _open(drv, plain)
    assert after["raw"] and after["outcome"].body is not None
    assert after["shown"] == LAST_WORDS


@pytest.mark.parametrize(
    ("reply", "shown"),
    [
        (Reply('{"words": "not a page"}', content_type="application/json"), "not a page"),
        (
            Reply(
                b"MZ" + b"\0" * 2048,
                content_type="text/html",
                headers={"Content-Disposition": "attachment; filename=x.html"},
            ),
            None,
        ),
        (Reply(f"<title>long</title><p id=last>{LAST_WORDS}</p>" + " " * 5000), LAST_WORDS),
    ],
    ids=["json", "attachment", "declared-too-large"],
)
def test_a_document_not_ours_to_take_is_let_go_at_once(
    drv: SyncDriver,
    http: LocalServer,
    monkeypatch: pytest.MonkeyPatch,
    reply: Reply,
    shown: str | None,
) -> None:
    monkeypatch.setattr(_early_body, "MAX_BYTES", 4096)
    url = http.route("/other", reply)
    seen = _open(drv, url)
    assert seen["outcome"].body is None
    assert seen["took"] < 5.0
    assert http.requests.count("/other") == 1  # let go on its way, not fetched again
    if shown is None:
        assert seen["outcome"].download  # became a download, which the driver cancels
    else:
        assert shown in seen["shown"] and seen["url"] == url


def _endless(handler: BaseHTTPRequestHandler, ends: list[float]) -> Reply:
    """A page whose body never ends (no length), until the client goes or 30 s pass; when
    the client went is added to `ends`."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/html; charset=utf-8")
    handler.send_header("Connection", "close")
    handler.end_headers()
    chunk = b"<p>more words, and more words that never end.</p>" * 1000
    until = time.monotonic() + 30
    try:
        while time.monotonic() < until:
            handler.wfile.write(chunk)
    except OSError:
        ends.append(time.monotonic())
    handler.close_connection = True
    return Reply(b"")  # its writes fail on the closed connection, which the server allows
