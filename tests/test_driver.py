"""The CDP driver against a real Chromium: owned tab, queue, reconnects, faults, safety."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from browser_core import (
    BlockedUrl,
    CdpUnreachable,
    ChromeProcess,
    OperationTimeout,
    Settings,
    SyncDriver,
    cdp_targets,
    launch_chrome,
    stop_pid,
)
from browser_core._cdp_raw import cdp_calls
from browser_core.chrome import chrome_args, close_target, find_chrome, free_port, new_target
from tests._downloads import DownloadWatch
from tests._server import LocalServer, Reply
from tests._service_proc import wait_until
from tests.conftest import make_settings


def tabs(settings: Settings) -> list[str]:
    return sorted(t["id"] for t in cdp_targets(settings.cdp_endpoint) if t["type"] == "page")


def read_body(drv: SyncDriver, url: str, **kw: Any) -> str:
    async def op(page: Any) -> str:
        await drv.driver.navigate(page, url)
        return str(await page.inner_text("body"))

    return str(drv.run("read", op, **kw))


def test_attach_reads_a_local_page(sync_driver: SyncDriver, http: LocalServer) -> None:
    url = http.route("/hello", Reply("<title>t</title><body><p>hello stream</p></body>"))
    assert read_body(sync_driver, url) == "hello stream"


def test_owned_tab_is_reused_across_calls(
    sync_driver: SyncDriver, http: LocalServer, settings: Settings
) -> None:
    url = http.route("/a", Reply("<p>a</p>"))
    read_body(sync_driver, url)
    before = tabs(settings)
    for _ in range(5):
        read_body(sync_driver, url)
    assert tabs(settings) == before


def test_a_new_driver_adopts_the_owned_tab_instead_of_opening_another(
    sync_driver: SyncDriver, http: LocalServer, settings: Settings
) -> None:
    url = http.route("/a", Reply("<p>a</p>"))
    read_body(sync_driver, url)
    before = tabs(settings)
    sync_driver.close()  # like our process restarting: Chrome and the tab stay
    second = SyncDriver(settings)
    try:
        assert read_body(second, url) == "a"
        assert tabs(settings) == before
    finally:
        second.shutdown(close_tab=False)


def test_tab_count_stays_bounded_when_pages_open_popups(
    sync_driver: SyncDriver, http: LocalServer, settings: Settings
) -> None:
    popup = http.route(
        "/popup",
        Reply(
            "<body><p>opener</p><script>window.open('/a'); window.open('/a', '_blank');</script>"
        ),
    )
    http.route("/a", Reply("<p>a</p>"))
    read_body(sync_driver, http.url("/a"))
    before = len(tabs(settings))
    for _ in range(10):
        read_body(sync_driver, popup)
    time.sleep(0.5)  # a window for a late popup to appear: an absence has no event to wait on
    assert len(tabs(settings)) == before


def test_other_tabs_are_never_closed(
    sync_driver: SyncDriver, http: LocalServer, settings: Settings
) -> None:
    url = http.route("/a", Reply("<p>a</p>"))

    async def open_user_tab(page: Any) -> str:
        user_tab = await page.context.new_page()  # stands in for a tab the user opened
        return str(user_tab.url)

    sync_driver.run("user", open_user_tab)
    before = tabs(settings)
    for _ in range(3):
        read_body(sync_driver, url)
    assert tabs(settings) == before


def test_twenty_threads_are_all_answered_one_at_a_time(
    sync_driver: SyncDriver, http: LocalServer
) -> None:
    http.route("/n", lambda h: Reply(f"<p>{h.path.split('=')[1]}</p>"))
    active, overlaps, results = [0], [0], {}
    guard = threading.Lock()

    async def op_for(n: int) -> Any:
        async def op(page: Any) -> str:
            with guard:
                active[0] += 1
                overlaps[0] = max(overlaps[0], active[0])
            try:
                await sync_driver.driver.navigate(page, http.url(f"/n?i={n}"))
                return str(await page.inner_text("body"))
            finally:
                with guard:
                    active[0] -= 1

        return op

    def worker(n: int) -> None:
        op = sync_driver.call(op_for(n), 5)
        results[n] = sync_driver.run(f"op{n}", op, timeout=60)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    assert results == {n: str(n) for n in range(20)}
    assert overlaps[0] == 1


def test_a_caller_waiting_past_its_deadline_gets_a_clear_timeout(
    sync_driver: SyncDriver, http: LocalServer
) -> None:
    slow = http.route("/slow", Reply("<p>slow</p>", delay_s=2.0))
    fast = http.route("/fast", Reply("<p>fast</p>"))
    holder = threading.Thread(target=read_body, args=(sync_driver, slow))
    holder.start()
    assert wait_until(lambda: "/slow" in http.requests, 5.0)  # the holder has the tab
    with pytest.raises(OperationTimeout, match="waited"):
        read_body(sync_driver, fast, timeout=0.5)
    assert holder.is_alive()  # it gave up at its own deadline, not when the tab came free
    holder.join(10)
    assert read_body(sync_driver, fast) == "fast"  # nothing was corrupted


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "chrome://settings",
        "javascript:alert(1)",
        "data:text/html,hi",
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:9222/json",
    ],
)
def test_policy_refuses_before_anything_is_shown(
    sync_driver: SyncDriver, http: LocalServer, url: str
) -> None:
    shown = http.route("/shown", Reply("<p>shown</p>"))
    read_body(sync_driver, shown)
    with pytest.raises(BlockedUrl):
        read_body(sync_driver, url)

    async def where(page: Any) -> str:
        return str(page.url)

    assert sync_driver.run("where", where) == shown


def test_a_redirect_to_an_internal_address_is_refused(
    chrome: ChromeProcess, http: LocalServer, tmp_path: Path
) -> None:
    # The test server is allowed as 127.0.0.1 only; "localhost" stays internal. (Every
    # connection's Fetch guard sees every tab: the other clients of this Chrome in the suite,
    # the service's included, allow 127.0.0.1 too, so the refusal is this driver's.)
    settings = make_settings(chrome, tmp_path, allow_hosts=(f"127.0.0.1:{http.port}",))
    http.route("/inner", Reply("<p>internal service</p>"))
    inner = f"http://localhost:{http.port}/inner"
    http.route("/jump", Reply("", status=302, headers={"Location": inner}))
    drv = SyncDriver(settings)
    try:
        with pytest.raises(BlockedUrl, match="redirect"):
            read_body(drv, http.url("/jump"))

        async def where(page: Any) -> str:
            return str(page.url)

        assert drv.run("where", where) == "about:blank"
        assert "/inner" not in http.requests  # refused before it was sent: nothing probed
    finally:
        drv.shutdown()


def test_dialogs_are_dismissed_and_downloads_refused(
    chrome: ChromeProcess, sync_driver: SyncDriver, http: LocalServer
) -> None:
    dialog = http.route(
        "/dialog",
        Reply(
            "<body><p id=o>before</p><script>alert('hi'); document.getElementById('o')"
            ".textContent = confirm('sure?') ? 'accepted' : 'dismissed';</script></body>"
        ),
    )
    attachment = Reply(
        b"\0" * 200_000,
        content_type="application/octet-stream",
        headers={"Content-Disposition": "attachment"},
    )
    ours, theirs = http.route("/ours.bin", attachment), http.route("/theirs.bin", attachment)

    async def op(page: Any) -> Any:
        return await sync_driver.driver.navigate(page, ours)

    with DownloadWatch(chrome.endpoint) as watch:  # before the driver attaches
        assert read_body(sync_driver, dialog) == "dismissed"
        outcome = sync_driver.run("download", op)
        # A tab that is not ours (the user's, or a popup not closed yet) has no handler of
        # the driver: while it is attached, Chrome itself refuses the download.
        other = new_target(chrome.endpoint)
        try:
            (tab,) = [t for t in cdp_targets(chrome.endpoint) if t["id"] == other]
            cdp_calls(tab["webSocketDebuggerUrl"], [("Page.navigate", {"url": theirs})], 5.0)
            elsewhere = watch.outcome("theirs.bin")
        finally:
            close_target(chrome.endpoint, other)
        ended = watch.outcome("ours.bin")
        sync_driver.close()
    assert outcome.download is True
    assert ended in ("refused", "canceled")  # Chrome saw it (the page did try), kept nothing
    assert elsewhere == "refused"  # not a byte taken, though no handler cancelled it


# -- faults: a Chrome of our own that the test can kill, freeze and restart -------------------


@pytest.fixture
def own_chrome(tmp_path: Path, server: LocalServer) -> Any:
    port = free_port()
    profile = str(tmp_path / "profile")
    procs: list[ChromeProcess] = []
    allow = (f"127.0.0.1:{server.port}",)

    def start() -> ChromeProcess:
        proc = launch_chrome(port=port, user_data_dir=profile, headless=True, allow_hosts=allow)
        procs.append(proc)
        return proc

    start()
    yield port, start, procs
    for proc in procs:
        os.killpg(proc.pid, signal.SIGCONT) if _alive(proc.pid) else None
        stop_pid(proc.pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_chrome_killed_mid_operation_fails_cleanly_then_recovers(
    own_chrome: Any, http: LocalServer, tmp_path: Path
) -> None:
    port, start, procs = own_chrome
    settings = make_settings(None, tmp_path, cdp_port=port, op_timeout_s=5)
    drv = SyncDriver(settings)
    hang = http.route("/hang", Reply("<p>late</p>", delay_s=3))
    ok = http.route("/ok", Reply("<p>ok</p>"))
    try:
        assert read_body(drv, ok) == "ok"
        threading.Timer(0.5, stop_pid, args=(procs[-1].pid,)).start()
        started = time.monotonic()
        with pytest.raises((CdpUnreachable, OperationTimeout)):
            read_body(drv, hang)
        assert time.monotonic() - started < 5.5
        with pytest.raises(CdpUnreachable, match="stream-browser chrome"):
            read_body(drv, ok)
        start()
        assert read_body(drv, ok) == "ok"  # same driver, same process
    finally:
        drv.shutdown(close_tab=False)


def test_frozen_chrome_is_bounded_by_the_deadline(
    own_chrome: Any, http: LocalServer, tmp_path: Path
) -> None:
    port, _start, procs = own_chrome
    settings = make_settings(None, tmp_path, cdp_port=port, op_timeout_s=2, connect_timeout_s=1)
    drv = SyncDriver(settings)
    ok = http.route("/ok", Reply("<p>ok</p>"))
    try:
        assert read_body(drv, ok, timeout=15) == "ok"  # attaching is not what is bounded here
        os.killpg(procs[-1].pid, signal.SIGSTOP)
        started = time.monotonic()
        with pytest.raises((OperationTimeout, CdpUnreachable)):
            read_body(drv, ok)
        assert time.monotonic() - started < 4.5
        os.killpg(procs[-1].pid, signal.SIGCONT)
        assert read_body(drv, ok) == "ok"
    finally:
        drv.shutdown(close_tab=False)


def test_a_download_another_client_lets_through_is_cancelled_by_the_driver(
    own_chrome: Any, http: LocalServer, tmp_path: Path
) -> None:
    """The driver's last defense: when downloads are allowed after all (another DevTools
    client, or the deny not installed), it cancels each download it sees."""
    port, _start, procs = own_chrome
    drv = SyncDriver(make_settings(None, tmp_path, cdp_port=port))
    slow = http.route(
        "/slow.bin",
        Reply(
            b"\0" * 200_000,
            content_type="application/octet-stream",
            headers={"Content-Disposition": "attachment; filename=slow.bin"},
            trickle_s=4.0,
        ),
    )
    let_through = tmp_path / "let-through"
    try:
        assert read_body(drv, http.route("/a", Reply("<p>a</p>"))) == "a"  # attached
        with DownloadWatch(procs[-1].endpoint, "allow", let_through) as watch:

            async def op(page: Any) -> Any:
                return await drv.driver.navigate(page, slow)

            outcome = drv.run("download", op)
            ended = watch.outcome("slow.bin")
            drv.close()
    finally:
        drv.shutdown(close_tab=False)
    assert outcome.download is True
    assert ended in ("refused", "canceled")  # never completed: nothing left on disk
    assert not let_through.exists() or list(let_through.iterdir()) == []


@pytest.fixture
def bare_chrome(tmp_path: Path) -> Any:
    """A Chrome we attach to but did not start (someone's own, by CDP_URL): none of our
    profile's preferences; downloads would land in `tmp_path / "downloads"`."""
    port, profile = free_port(), tmp_path / "bare"
    (profile / "Default").mkdir(parents=True)
    (profile / "Default" / "Preferences").write_text(
        json.dumps({"download": {"default_directory": str(tmp_path / "downloads")}})
    )
    args = chrome_args(port, str(profile), headless=True, window=(1280, 800))
    proc = subprocess.Popen(
        [find_chrome(), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    endpoint = f"http://127.0.0.1:{port}"
    assert wait_until(lambda: _answers(endpoint), 15.0), "the bare Chrome did not start"
    yield port, endpoint
    stop_pid(proc.pid)
    proc.wait(5)


def _answers(endpoint: str) -> bool:
    try:
        return bool(cdp_targets(endpoint))
    except CdpUnreachable:
        return False


def test_on_a_chrome_we_did_not_start_no_tab_saves_a_download_while_attached(
    bare_chrome: Any, http: LocalServer, tmp_path: Path
) -> None:
    """With no `download_restrictions` in its profile, the driver's deny is what refuses
    downloads while it is attached (it once lasted only as long as the CDP session that set
    it: a moment)."""
    port, endpoint = bare_chrome
    theirs = http.route(
        "/theirs.bin",
        Reply(
            b"\0" * 200_000,
            content_type="application/octet-stream",
            headers={"Content-Disposition": "attachment"},
        ),
    )
    drv = SyncDriver(make_settings(None, tmp_path, cdp_port=port))
    try:
        with DownloadWatch(endpoint) as watch:  # before the driver attaches
            assert read_body(drv, http.route("/a", Reply("<p>a</p>"))) == "a"  # attached
            other = new_target(endpoint)
            (tab,) = [t for t in cdp_targets(endpoint) if t["id"] == other]
            cdp_calls(tab["webSocketDebuggerUrl"], [("Page.navigate", {"url": theirs})], 5.0)
            ended = watch.outcome("theirs.bin")
            drv.close()
    finally:
        drv.shutdown(close_tab=False)
    assert ended == "refused"
    assert not (tmp_path / "downloads").exists() or list((tmp_path / "downloads").iterdir()) == []


def test_no_chrome_reports_cdp_unreachable_with_the_fix(tmp_path: Path) -> None:
    settings = make_settings(None, tmp_path, op_timeout_s=3)
    drv = SyncDriver(settings)
    try:
        started = time.monotonic()
        with pytest.raises(CdpUnreachable) as info:
            drv.run("read", lambda page: page.title())
        assert time.monotonic() - started < 3.5
        assert settings.cdp_endpoint in str(info.value)
        assert "stream-browser chrome" in str(info.value)
        assert info.value.kind == "cdp-unreachable"
    finally:
        drv.shutdown(close_tab=False)


def test_a_page_cannot_frame_or_probe_an_internal_service(
    sync_driver: SyncDriver, http: LocalServer
) -> None:
    # 127.0.0.1 is allowed for the test server; "localhost" (the same server) is not.
    http.route("/secret", Reply("<p>internal admin panel</p>"))
    page_url = http.route(
        "/framer",
        Reply(
            f"<body><p>public page</p><iframe src='http://localhost:{http.port}/secret'></iframe>"
            f"<img src='http://localhost:{http.port}/secret?img'>"
            f"<script>fetch('http://localhost:{http.port}/secret?xhr').catch(() => 0)</script>"
            "</body>"
        ),
    )
    assert read_body(sync_driver, page_url) == "public page"

    async def frame_text(page: Any) -> list[str]:
        return [
            await f.evaluate("document.body ? document.body.innerText : ''")
            for f in page.frames[1:]
        ]

    time.sleep(0.3)
    assert "internal admin panel" not in " ".join(sync_driver.run("frames", frame_text))
    assert not [path for path in http.requests if path.startswith("/secret")]


def test_a_page_hook_never_sees_a_request_to_an_internal_address(
    settings: Settings, http: LocalServer
) -> None:
    """The driver's route guard comes before every page hook (a replayed recording, a test's
    routes): a hook that answers requests itself must not answer one for an internal address
    (what it holds for it would be shown as that service's)."""
    answered: list[str] = []

    async def answer_everything(page: Any) -> None:
        async def fulfil(route: Any) -> None:
            if route.request.url.startswith(http.prefix):
                await route.fallback()
                return
            answered.append(route.request.url)
            await route.fulfill(body="<p>internal admin panel</p>", content_type="text/html")

        await page.route("**/*", fulfil)

    inner = f"http://localhost:{http.port}/secret"
    page_url = http.route(
        "/hooked",
        Reply(
            f"<body><p>public page</p><iframe src='{inner}'></iframe><img src='{inner}?img'>"
            f"<script>fetch('{inner}?xhr').catch(() => 0)</script></body>"
        ),
    )
    drv = SyncDriver(settings)
    drv.driver.page_hooks.append(answer_everything)
    try:
        assert read_body(drv, page_url) == "public page"
        time.sleep(0.3)  # a window for late requests: an absence has no event to wait on
    finally:
        drv.shutdown()
    assert answered == []


def test_a_frame_from_another_site_cannot_probe_an_internal_service_either(
    bare_chrome: Any, http: LocalServer, tmp_path: Path
) -> None:
    """A cross-site frame runs in a renderer (and a DevTools target) of its own: its requests
    are refused too, not only the page's (on a Chrome with no egress guard behind it)."""
    port, _endpoint = bare_chrome
    other = LocalServer("127.0.0.2")  # another site: Chrome isolates its frame
    try:
        http.route("/secret", Reply("<p>internal admin panel</p>"))
        inner = f"http://localhost:{http.port}/secret"
        framed = other.route(
            "/framed",
            Reply(
                f"<body><p>their frame</p><img src='{inner}?img'>"
                f"<script>fetch('{inner}?xhr').catch(() => 0)</script></body>"
            ),
        )
        page_url = http.route("/outer", Reply(f"<body><p>public page</p><iframe src='{framed}'>"))
        settings = make_settings(
            None, tmp_path, cdp_port=port, allow_hosts=("127.0.0.1", "127.0.0.2")
        )
        drv = SyncDriver(settings)
        try:
            assert read_body(drv, page_url) == "public page"
            assert wait_until(lambda: "/framed" in other.requests, 5.0)
            time.sleep(0.5)  # a window for the frame's requests: an absence has no event
        finally:
            drv.shutdown()
        assert not [path for path in http.requests if path.startswith("/secret")]
    finally:
        other.stop()
