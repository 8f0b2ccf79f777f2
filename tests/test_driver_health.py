"""Chrome's health, remembered by the driver, and a page left spinning (real Chromium).

After a failed connect later calls fail at once without trying to connect (counted from the
driver's `driver.connect_attempt` events, not timed); a background probe of `/json/version`
sees Chrome come back; a socket that accepts and never answers, and a SIGSTOPped Chrome, are
found by the probe's timeout. A page that starts `while(true)` after a read is replaced by a
blank tab at the next call, well inside a deadline the old behaviour (a 15 s wait) broke.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator, MutableMapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from browser_core import (
    CdpUnreachable,
    ChromeProcess,
    OperationTimeout,
    Settings,
    SyncDriver,
    cdp_targets,
    launch_chrome,
    stop_pid,
)
from browser_core.chrome import free_port
from tests._server import LocalServer, Reply
from tests.conftest import make_settings


def read_body(drv: SyncDriver, url: str, **kw: Any) -> str:
    async def op(page: Any) -> str:
        await drv.driver.navigate(page, url)
        return str(await page.inner_text("body"))

    return str(drv.run("read", op, **kw))


def fails_with(drv: SyncDriver, url: str, *errors: type[BaseException]) -> BaseException:
    with pytest.raises(errors or (CdpUnreachable,)) as info:
        read_body(drv, url)
    return info.value


def connect_attempts(logs: Sequence[MutableMapping[str, Any]]) -> int:
    return sum(1 for entry in logs if entry["event"] == "driver.connect_attempt")


def wait_for_state(drv: SyncDriver, state: str, within_s: float = 15.0) -> None:
    """Wait (bounded) for the background probe to move the health to `state`."""
    until = time.monotonic() + within_s
    while drv.driver.health.state != state and time.monotonic() < until:
        time.sleep(0.05)
    assert drv.driver.health.state == state, drv.driver.health


class OwnChrome:
    """A Chromium of this test's own on a fixed port, to kill, freeze and restart."""

    def __init__(self, tmp_path: Path, server: LocalServer) -> None:
        self.port = free_port()
        self.profile = str(tmp_path / "profile")
        self.allow = (f"127.0.0.1:{server.port}",)
        self.procs: list[ChromeProcess] = []

    def start(self) -> ChromeProcess:
        proc = launch_chrome(
            port=self.port, user_data_dir=self.profile, headless=True, allow_hosts=self.allow
        )
        self.procs.append(proc)
        return proc

    def signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.procs[-1].pid, sig)

    def stop(self) -> None:
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGCONT)
            stop_pid(proc.pid)


@pytest.fixture
def own_chrome(tmp_path: Path, server: LocalServer) -> Iterator[OwnChrome]:
    chrome = OwnChrome(tmp_path, server)
    chrome.start()
    yield chrome
    chrome.stop()


@pytest.fixture
def mute_socket() -> Iterator[int]:
    """A port that accepts connections and never says a word (a hung Chrome, a wrong port)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                held.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(listener.getsockname()[1])
    stop.set()
    thread.join(2)
    for conn in held:
        conn.close()
    listener.close()


def driver_for(tmp_path: Path, port: int, **extra: Any) -> SyncDriver:
    settings: Settings = make_settings(None, tmp_path, cdp_port=port, **extra)
    return SyncDriver(settings)


# -- Chrome down, remembered ---------------------------------------------------------------


def test_a_refusing_port_marks_chrome_down_and_later_calls_fail_without_connecting(
    tmp_path: Path, http: LocalServer
) -> None:
    url = http.route("/ok", Reply("<p>ok</p>"))
    drv = driver_for(tmp_path, free_port(), op_timeout_s=5)
    try:
        with capture_logs() as first:
            fails_with(drv, url)
        assert connect_attempts(first) >= 1
        health = drv.driver.health
        assert (health.state, health.connect_failures, health.hung) == ("down", 1, False)
        assert health.probing and "refused" in (health.last_error or "")
        with capture_logs() as later:
            errors = [fails_with(drv, url) for _ in range(5)]
        assert connect_attempts(later) == 0
        assert all("is down" in str(e) and "stream-browser chrome" in str(e) for e in errors)
        assert {e.kind for e in errors} == {"cdp-unreachable"}  # type: ignore[attr-defined]
        assert drv.driver.health.connect_failures == 1
    finally:
        drv.shutdown(close_tab=False)


def test_a_restarted_chrome_is_used_again_once_the_probe_sees_it(
    own_chrome: OwnChrome, tmp_path: Path, http: LocalServer
) -> None:
    url = http.route("/ok", Reply("<p>ok</p>"))
    drv = driver_for(tmp_path, own_chrome.port, op_timeout_s=8)
    try:
        assert read_body(drv, url) == "ok"
        assert (drv.driver.health.state, drv.driver.health.reconnects) == ("up", 0)
        own_chrome.stop()
        fails_with(drv, url, CdpUnreachable)
        fails_with(drv, url, CdpUnreachable)
        assert drv.driver.health.state == "down"
        own_chrome.start()
        wait_for_state(drv, "up")  # the background probe saw it: no call was needed
        with capture_logs() as logs:
            assert read_body(drv, url) == "ok"
        assert connect_attempts(logs) == 1
        health = drv.driver.health
        assert (health.state, health.connected, health.reconnects) == ("up", True, 1)
        assert not health.probing
    finally:
        drv.shutdown(close_tab=False)


def test_a_socket_that_accepts_and_never_answers_is_marked_down_by_the_probe_timeout(
    mute_socket: int, tmp_path: Path, http: LocalServer
) -> None:
    url = http.route("/ok", Reply("<p>ok</p>"))
    drv = driver_for(tmp_path, mute_socket, op_timeout_s=15, connect_timeout_s=5)
    try:
        with capture_logs() as first:
            error = fails_with(drv, url)
        assert connect_attempts(first) == 1  # no retry into a socket that never answers
        assert "no answer within" in str(error)
        health = drv.driver.health
        assert (health.state, health.hung, health.probing) == ("down", True, True)
        with capture_logs() as later:
            for _ in range(5):
                fails_with(drv, url)
        assert connect_attempts(later) == 0
    finally:
        drv.shutdown(close_tab=False)


def test_a_frozen_chrome_is_marked_down_then_used_again_when_it_thaws(
    own_chrome: OwnChrome, tmp_path: Path, http: LocalServer
) -> None:
    url = http.route("/ok", Reply("<p>ok</p>"))
    drv = driver_for(tmp_path, own_chrome.port, op_timeout_s=6)
    try:
        assert read_body(drv, url) == "ok"
        own_chrome.signal(signal.SIGSTOP)
        fails_with(drv, url, CdpUnreachable, OperationTimeout)  # the tab, then /json/version
        fails_with(drv, url, CdpUnreachable)  # the connect's probe times out: down
        assert (drv.driver.health.state, drv.driver.health.hung) == ("down", True)
        with capture_logs() as later:
            fails_with(drv, url)
        assert connect_attempts(later) == 0
        own_chrome.signal(signal.SIGCONT)
        wait_for_state(drv, "up")
        assert read_body(drv, url) == "ok"
    finally:
        own_chrome.signal(signal.SIGCONT)
        drv.shutdown(close_tab=False)


def test_the_health_snapshot_has_the_documented_fields(tmp_path: Path) -> None:
    drv = driver_for(tmp_path, free_port())
    try:
        fields = drv.driver.health.as_dict()
        assert set(fields) == {
            "state",
            "endpoint",
            "since",
            "last_error",
            "reconnects",
            "connect_failures",
            "hung",
            "connected",
            "probing",
        }
        assert fields["state"] == "unknown" and fields["connected"] is False
        assert fields["endpoint"] == drv.driver.settings.cdp_endpoint
    finally:
        drv.shutdown(close_tab=False)


# -- a page left spinning (issue 11) ---------------------------------------------------------


# The page asks every 50 ms whether to start spinning; when told to, it reports with a
# synchronous request and enters the busy loop as soon as that is answered: the test waits on
# that event (plus a moment for the answer to arrive), not on a guess of how long loading takes.
SPINS_ON_CUE = (
    "<title>spin</title><p>read me, then I spin</p><script>setInterval(async () => {"
    " if ((await (await fetch('/cue')).text()) === 'go') { const x = new XMLHttpRequest();"
    " x.open('GET', '/spinning', false); x.send(); while (true) {} } }, 50)</script>"
)


def page_ids(settings: Settings) -> set[str]:
    return {t["id"] for t in cdp_targets(settings.cdp_endpoint) if t["type"] == "page"}


def test_a_page_that_starts_spinning_after_a_read_is_left_for_a_blank_tab(
    sync_driver: SyncDriver, http: LocalServer, settings: Settings
) -> None:
    go, spinning = threading.Event(), threading.Event()

    def beacon(handler: Any) -> Reply:
        threading.Timer(0.3, spinning.set).start()  # the answer reaches the page meanwhile
        return Reply("ok", content_type="text/plain")

    http.route("/cue", lambda h: Reply("go" if go.is_set() else "wait", content_type="text/plain"))
    http.route("/spinning", beacon)
    spin = http.route("/spin", Reply(SPINS_ON_CUE))
    calm = http.route("/calm", Reply("<p>calm</p>"))
    assert read_body(sync_driver, calm) == "calm"
    before = page_ids(settings)
    assert read_body(sync_driver, spin) == "read me, then I spin"
    go.set()
    assert spinning.wait(10)  # the page took its cue: it is spinning from now on
    with capture_logs() as logs:
        # 5 s: well under the 10 s navigation timeout a spinning tab used to cost.
        assert read_body(sync_driver, calm, timeout=5) == "calm"
    assert [e for e in logs if e["event"] == "driver.tab_wedged_closed"]
    # Chrome drops a tab closed over HTTP from its target list a moment later: wait for it.
    until = time.monotonic() + 5
    while len(after := page_ids(settings)) != len(before) and time.monotonic() < until:
        time.sleep(0.1)
    assert len(after) == len(before) and after != before  # replaced, not added
