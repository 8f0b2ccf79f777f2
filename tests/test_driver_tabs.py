"""Exactly one tab, ours, after every recovery (real Chromium; the tab strip read from CDP's
`/json/list` page targets).

The paths: a tab left with a JS dialog by a process that has exited (in-process and through
a restarted service), Chrome slow to say which blank tab it opened while the driver replaced
a stuck one, a renderer crash, Chrome killed and started again by something that left no
record of its start tab, and the owned tab moved by hand (raw CDP, or a person's Playwright
tool sending it to a page that asks before it is left, then the same page read again through
the service with the product's cache). Ours is the tab the driver's state file names.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import async_playwright
from structlog.testing import capture_logs

from browser_core import (
    ChromeProcess,
    ProviderError,
    SyncDriver,
    cdp_targets,
    launch_chrome,
    stop_pid,
)
from browser_core._cdp_raw import cdp_calls, tab_responds
from browser_core.chrome import close_target, free_port, save_state
from search import client
from tests._server import LocalServer, Reply
from tests._service_proc import start_service, wait_until
from tests.conftest import make_settings

ARTICLE = "<!DOCTYPE html><title>Calm</title><p>{text}</p>{extra}"
CALM = "A calm sentence about the weather on the coast."


class OwnChrome:
    """A headless Chromium of this test's own, started as `stream-browser chrome` does."""

    def __init__(self, tmp_path: Path, server: LocalServer) -> None:
        self.port = free_port()
        self.tmp = tmp_path
        self.allow = (f"127.0.0.1:{server.port}",)
        self.procs: list[ChromeProcess] = []

    @property
    def state(self) -> Path:
        return self.tmp / "state"

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, *, record: bool = True) -> ChromeProcess:
        """Start Chrome; with `record`, the state file that tells its start tab (as
        `stream-browser chrome` writes it), else none (systemd, a supervisor, a person)."""
        proc = launch_chrome(
            port=self.port,
            user_data_dir=str(self.tmp / "profile"),
            headless=True,
            allow_hosts=self.allow,
        )
        self.procs.append(proc)
        if record:
            save_state(str(self.state), proc)
        return proc

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.procs[-1].pid, signal.SIGKILL)
        stop_pid(self.procs[-1].pid)

    def stop(self) -> None:
        for proc in self.procs:
            stop_pid(proc.pid)
            if proc.egress_pid:
                stop_pid(proc.egress_pid)

    def pages(self) -> list[dict[str, str]]:
        return [t for t in cdp_targets(self.endpoint) if t.get("type") == "page"]

    def owned(self) -> str | None:
        """The tab the driver's state file names as ours."""
        (path,) = self.state.glob("owned-tab-*.json")
        return json.loads(path.read_text())["target_id"]

    def leave_a_dialog_open(self, url: str) -> None:
        """With no driver attached, the page moves on to one that alerts at once."""
        (tab,) = self.pages()
        ws_url = tab["webSocketDebuggerUrl"]
        cdp_calls(ws_url, [("Page.navigate", {"url": url})], 2.0)
        assert wait_until(lambda: not tab_responds(ws_url, 0.3), 5.0), "no dialog came"


@pytest.fixture
def own(tmp_path: Path, server: LocalServer) -> Iterator[OwnChrome]:
    chrome = OwnChrome(tmp_path, server)
    chrome.start()
    yield chrome
    chrome.stop()


@pytest.fixture
def pages(http: LocalServer) -> dict[str, str]:
    return {
        "calm": http.route("/calm", Reply(ARTICLE.format(text=CALM, extra=""))),
        "alert": http.route(
            "/alert", Reply(ARTICLE.format(text=CALM, extra="<script>alert('left')</script>"))
        ),
    }


def read_body(drv: SyncDriver, url: str) -> str:
    async def op(page: Any) -> str:
        await drv.driver.navigate(page, url)
        return str(await page.inner_text("body"))

    return str(drv.run("read", op))


def assert_only_ours(chrome: OwnChrome) -> str:
    """The tab strip holds one tab, the one the state file names (Chrome drops a tab closed
    over HTTP from its list a moment later: wait for that, bounded)."""
    wait_until(lambda: len(chrome.pages()) == 1, 5.0)
    tabs = chrome.pages()
    assert [t["id"] for t in tabs] == [chrome.owned()], [t["url"] for t in tabs]
    return tabs[0]["id"]


def test_a_dialog_left_by_a_process_that_exited_leaves_our_new_tab_alone_on_the_strip(
    own: OwnChrome, pages: dict[str, str], tmp_path: Path
) -> None:
    settings = make_settings(None, tmp_path, cdp_port=own.port)
    first = SyncDriver(settings)
    assert read_body(first, pages["calm"]) == CALM
    first.shutdown(close_tab=False)  # a CLI process exits: nobody answers dialogs now
    stuck = assert_only_ours(own)
    own.leave_a_dialog_open(pages["alert"])
    second = SyncDriver(settings)
    try:
        assert read_body(second, pages["calm"]) == CALM
        assert assert_only_ours(own) != stuck
    finally:
        second.shutdown(close_tab=False)


class SlowNewTab:
    """Chrome's HTTP endpoint behind a loopback hop that answers `/json/new` late: the tab
    opens at once, its id comes after the driver stopped waiting (a loaded machine). The
    WebSocket addresses Chrome gives point at Chrome itself, so attaching is unchanged."""

    def __init__(self, endpoint: str, delay_s: float) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                request = urllib.request.Request(f"{endpoint}{self.path}", method=self.command)
                with urllib.request.urlopen(request, timeout=5) as response:
                    body = response.read()
                if self.path.startswith("/json/new"):
                    outer.late.append(json.loads(body)["id"])
                    time.sleep(delay_s)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                with contextlib.suppress(OSError):  # the driver stopped listening
                    self.wfile.write(body)

            do_PUT = do_GET

        self.late: list[str] = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_blank_tab_chrome_named_too_late_is_closed_once_ours_exists(
    own: OwnChrome, pages: dict[str, str], tmp_path: Path
) -> None:
    hop = SlowNewTab(own.endpoint, delay_s=3.0)
    settings = make_settings(None, tmp_path, cdp_url=hop.url)
    try:
        first = SyncDriver(settings)
        assert read_body(first, pages["calm"]) == CALM
        first.shutdown(close_tab=False)
        # Chrome's start tab: a driver given CDP_URL does not take it as its own.
        for tab in own.pages():
            if tab["id"] != own.owned():
                close_target(own.endpoint, tab["id"])
        assert_only_ours(own)
        own.leave_a_dialog_open(pages["alert"])
        second = SyncDriver(settings)
        try:
            assert read_body(second, pages["calm"]) == CALM
            assert hop.late, "the driver did not open a blank tab over HTTP"
            ours = assert_only_ours(own)
            assert ours not in hop.late  # the blank tab was closed, not kept as ours
        finally:
            second.shutdown(close_tab=False)
    finally:
        hop.stop()


def test_a_service_restarted_while_its_tab_shows_a_dialog_leaves_one_tab_its_own(
    own: OwnChrome, pages: dict[str, str]
) -> None:
    def browse(service: Any) -> None:
        answer = client.browse(
            action="read",
            url=pages["calm"],
            broadcasting=True,
            service_url=service.url,
            token=service.token,
        )
        assert answer is not None and answer["result"]["success"], answer

    service = start_service(own.procs[-1], own.state)
    try:
        browse(service)
        stuck = assert_only_ours(own)
    finally:
        assert service.stop() == 0
    own.leave_a_dialog_open(pages["alert"])
    service = start_service(own.procs[-1], own.state)
    try:
        browse(service)
        assert assert_only_ours(own) != stuck
    finally:
        service.stop()


def test_a_crashed_tab_is_replaced_by_ours_alone(
    own: OwnChrome, pages: dict[str, str], tmp_path: Path
) -> None:
    drv = SyncDriver(make_settings(None, tmp_path, cdp_port=own.port))
    try:
        assert read_body(drv, pages["calm"]) == CALM
        (tab,) = own.pages()
        with contextlib.suppress(Exception):  # the renderer dies before it answers
            cdp_calls(tab["webSocketDebuggerUrl"], [("Page.crash", {})], 2.0)
        assert wait_until(lambda: _read_or_none(drv, pages["calm"]) == CALM, 20.0)
        assert_only_ours(own)
    finally:
        drv.shutdown(close_tab=False)


@pytest.mark.parametrize("record", [True, False], ids=["recorded", "unrecorded"])
def test_after_chrome_is_killed_and_started_again_its_blank_tab_becomes_ours(
    own: OwnChrome, pages: dict[str, str], tmp_path: Path, record: bool
) -> None:
    drv = SyncDriver(make_settings(None, tmp_path, cdp_port=own.port))
    try:
        assert read_body(drv, pages["calm"]) == CALM
        before = assert_only_ours(own)
        own.kill()
        started = own.start(record=record)
        assert wait_until(lambda: _read_or_none(drv, pages["calm"]) == CALM, 20.0)
        ours = assert_only_ours(own)
        assert ours != before
        if record:
            assert ours == started.start_target
    finally:
        drv.shutdown(close_tab=False)


def _read_or_none(drv: SyncDriver, url: str) -> str | None:
    """A read, or None while the driver still reports the crash or the restart."""
    try:
        return read_body(drv, url)
    except ProviderError:  # cdp-unreachable, a timeout: try again
        time.sleep(0.2)
        return None


# -- a person moves the owned tab by hand -----------------------------------------------------


def _moved_by_hand(chrome: OwnChrome, url: str) -> None:
    """A person's DevTools (a second CDP client, raw, beside the driver's attached one)
    sends the owned tab to `url`."""
    tabs = [t for t in chrome.pages() if t["id"] == chrome.owned()]
    assert tabs, "the owned tab is not on the strip"
    cdp_calls(tabs[0]["webSocketDebuggerUrl"], [("Page.navigate", {"url": url})], 5.0)


@pytest.mark.slow
def test_the_owned_tab_a_person_moved_by_hand_is_found_and_used_by_every_later_call(
    own: OwnChrome, http: LocalServer, tmp_path: Path
) -> None:
    from search.providers.read import read_page

    a, b = http.url("/hand-ping"), http.url("/hand-pong")
    http.route("/hand-ping", Reply(f"<meta http-equiv=refresh content='0;url={b}'><p>ping"))
    http.route("/hand-pong", Reply(f"<meta http-equiv=refresh content='0;url={a}'><p>pong"))
    places = [
        http.route("/hand-elsewhere", Reply(ARTICLE.format(text="Somewhere else.", extra=""))),
        a,  # a page that keeps moving itself on (it beat a goto of ours to the commit)
        http.route("/hand-slow", Reply(ARTICLE.format(text="Still loading.", extra=""), delay_s=3)),
        b,
        f"http://localhost:{http.port}/hand-other-site",  # another site: a new renderer
        "about:blank",
    ]
    settings = make_settings(None, tmp_path, cdp_port=own.port)
    drv = SyncDriver(settings)
    try:
        first = http.route("/hand-0", Reply(ARTICLE.format(text="Call 0 text.", extra="")))
        assert read_body(drv, first) == "Call 0 text."
        ours = assert_only_ours(own)
        for n in range(1, 16):
            _moved_by_hand(own, places[n % len(places)])
            time.sleep(0.2 * (n % 3))  # the call comes while the page loads, or after
            url = http.route(f"/hand-{n}", Reply(ARTICLE.format(text=f"Call {n} text.", extra="")))
            read = drv.call(read_page(drv.driver, url, settings, timeout=15), 20)
            assert read.outcome == "ok" and f"Call {n} text." in read.text, (n, read)
            drv.call(drv.driver.stage_done(), 5)
            assert assert_only_ours(own) == ours, n  # the same tab, the one the state names
            (tab,) = own.pages()
            assert tab["url"] == url, (n, tab["url"])  # and the call showed its page there
    finally:
        drv.shutdown(close_tab=False)


class PersonsTool:
    """A person's own Playwright tool beside the driver: connected over CDP for good, on an
    event loop of its own (it answers what Playwright answers by itself, such as a
    `beforeunload` dialog, while the driver works), moving whichever tab it is told to."""

    def __init__(self, endpoint: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self._playwright: Any = None
        self.browser: Any = self._run(self._connect(endpoint))

    def _run(self, step: Any, timeout: float = 30.0) -> Any:
        return asyncio.run_coroutine_threadsafe(step, self.loop).result(timeout)

    async def _connect(self, endpoint: str) -> Any:
        self._playwright = await async_playwright().start()
        return await self._playwright.chromium.connect_over_cdp(endpoint)

    def move(self, target_id: str, url: str, *, click: bool) -> None:
        """The tab `target_id` sent to `url`; with `click`, a click on its text (the user
        activation a page needs before Chrome asks whether to leave it)."""
        self._run(self._move(target_id, url, click))

    async def _move(self, target_id: str, url: str, click: bool) -> None:
        context = self.browser.contexts[0]
        for page in context.pages:
            session = await context.new_cdp_session(page)
            info = await session.send("Target.getTargetInfo")
            await session.detach()
            if info["targetInfo"]["targetId"] == target_id:
                await page.goto(url)
                if click:
                    await page.click("p")
                return
        raise AssertionError(f"the person's tool does not see the tab {target_id}")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._run(self.browser.close(), 10)
            self._run(self._playwright.stop(), 10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


ASK_TO_STAY = (
    "<!DOCTYPE html><title>Stay</title><p>Are you sure you want to leave?</p><script>"
    "addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = ''; });"
    "</script>"
)


@pytest.mark.slow
def test_the_owned_tab_a_persons_tool_sends_to_a_page_asking_to_stay_stays_the_recorded_one(
    own: OwnChrome, http: LocalServer, tmp_path: Path
) -> None:
    """A person's Playwright tool (a second CDP client, connected throughout) sends the owned
    tab to a page with a `beforeunload` handler, clicked or not (Chrome asks whether to
    leave only after a click), and the next read takes the tab from there; the driver is
    restarted halfway, as a service is. After every read: one tab, ours, the one the state
    folder names (a restarted service finds it there), showing the read's page."""
    from search.providers.read import read_page

    stay = http.route("/hand-stay", Reply(ASK_TO_STAY))
    settings = make_settings(None, tmp_path, cdp_port=own.port)
    drivers = [SyncDriver(settings)]
    person = PersonsTool(own.endpoint)
    try:
        assert read_body(
            drivers[0], http.route("/stay-0", Reply(ARTICLE.format(text="0", extra="")))
        )
        ours = assert_only_ours(own)
        with capture_logs() as logs:
            for n in range(1, 17):
                if n == 9:  # the service restarted: the new driver finds its tab by the record
                    drivers[-1].shutdown(close_tab=False)
                    drivers.append(SyncDriver(settings))
                drv = drivers[-1]
                person.move(own.owned() or "", f"{stay}?n={n}", click=n % 4 != 0)
                text = f"Call {n} text."
                url = http.route(f"/stay-{n}", Reply(ARTICLE.format(text=text, extra="")))
                read = drv.call(read_page(drv.driver, url, settings, timeout=15), 20)
                assert read.outcome == "ok" and text in read.text, (n, read)
                drv.call(drv.driver.stage_done(), 5)
                assert assert_only_ours(own) == ours, n  # the same tab, the one the state names
                (tab,) = own.pages()
                assert tab["url"] == url, (n, tab["url"])  # what the brain hears, on screen
        asked = [e for e in logs if e.get("dialog_type") == "beforeunload"]
        assert len(asked) >= 8, "Chrome did not ask before leaving the clicked pages"
    finally:
        person.close()
        drivers[-1].shutdown(close_tab=False)


def test_a_read_whose_tab_a_person_sends_to_a_page_that_keeps_moving_opens_its_page_again(
    own: OwnChrome, http: LocalServer, tmp_path: Path
) -> None:
    """While a read waits for its page to finish loading, a person sends the tab to a page
    that moves itself on for good (a meta-refresh ping-pong, as the CI run on 7f70d28 met when
    that page's own next navigation committed after the read's): the read opens its page once
    more and reads it, on the same tab, which ends on it."""
    from search.providers.read import read_page

    a, b = http.url("/run-ping"), http.url("/run-pong")
    http.route("/run-ping", Reply(f"<meta http-equiv=refresh content='0;url={b}'><p>ping"))
    http.route("/run-pong", Reply(f"<meta http-equiv=refresh content='0;url={a}'><p>pong"))
    sent = threading.Event()

    def image(handler: BaseHTTPRequestHandler) -> Reply:
        """Asked for while the read's page loads (its `load` waits for it): the person moves
        the tab on then, the first time only (the read's second opening is left alone)."""
        if not sent.is_set():
            sent.set()
            _moved_by_hand(own, a)
        return Reply(b"", delay_s=4, content_type="image/png")

    http.route("/late.png", image)
    page = Reply(ARTICLE.format(text="The page of the read.", extra="<img src='/late.png'>"))
    url = http.route("/run-read", page)
    settings = make_settings(None, tmp_path, cdp_port=own.port)
    drv = SyncDriver(settings)
    try:
        assert read_body(drv, http.route("/run-0", Reply(ARTICLE.format(text="0", extra=""))))
        ours = assert_only_ours(own)
        read = drv.call(read_page(drv.driver, url, settings, timeout=20), 25)
        assert sent.is_set()
        assert read.outcome == "ok" and "The page of the read." in read.text, read
        assert read.final_url == url, read.final_url
        drv.call(drv.driver.stage_done(), 5)
        assert assert_only_ours(own) == ours
        (tab,) = own.pages()
        assert tab["url"] == url, tab["url"]
    finally:
        drv.shutdown(close_tab=False)


@pytest.mark.slow
def test_repeated_reads_through_the_service_after_a_persons_move_show_the_read_page(
    own: OwnChrome, http: LocalServer
) -> None:
    """Through the service with the product's cache (`SB_CACHE_TTL_S` unset: 60 s), the brain
    reads the same page again after a person's tool sent the owned tab to a page asking to
    stay: the read shows its page again (the audience sees what the brain hears), and after
    every read one tab, ours, the one the state folder names; the service restarts halfway."""
    stay = http.route("/svc-stay", Reply(ASK_TO_STAY))
    url = http.route("/svc-read", Reply(ARTICLE.format(text="The page read again.", extra="")))
    person = PersonsTool(own.endpoint)
    service = start_service(own.procs[-1], own.state, SB_CACHE_TTL_S="60")
    try:
        for n in range(1, 9):
            if n == 5:
                assert service.stop() == 0
                service = start_service(own.procs[-1], own.state, SB_CACHE_TTL_S="60")
            if n > 1:
                person.move(own.owned() or "", f"{stay}?n={n}", click=n % 2 == 0)
            answer = client.browse(
                action="read",
                url=url,
                broadcasting=True,
                service_url=service.url,
                token=service.token,
            )
            assert answer is not None and answer["result"]["success"], (n, answer)
            assert "The page read again." in answer["result"]["reply_text"], n
            assert_only_ours(own)
            (tab,) = own.pages()
            assert tab["url"] == url, (n, tab["url"])  # what the brain hears, on screen
    finally:
        person.close()
        service.stop()
