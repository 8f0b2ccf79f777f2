"""A burst of callers: twenty at once through the real service, each page answered after
0.3 s, at the default call deadline (25 s, of which Gemini keeps its floor).

While another call waits for the tab, the stage's work after an answer is cut to what the
audience must see (the passage scrolled to and marked), so a queue of N costs about N bare
reads, not N shows: every caller gets the screen's answer (the chain is the read alone, never
a Gemini fallback), in the order they arrived, on the one owned tab.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from browser_core import ChromeProcess, Driver, cdp_targets
from search import BrowseTool, ToolContext
from tests._server import LocalServer, Reply
from tests._service_proc import (  # noqa: F401 (shared_service is a fixture)
    ROOT,
    ServiceProc,
    clean_env,
    shared_service,
    wait_until,
)
from tests.conftest import make_settings

CLIENT_FILE = ROOT / "search" / "client.py"
CALLERS = 20
PAGE_DELAY_S = 0.3
LIVE = ToolContext(broadcasting=True)


def _article(i: int) -> str:
    return (
        f"<title>Burst {i}</title><h1>Page {i}</h1><p>Caller {i} asked about kestrels. "
        + "Kestrels hover over fields and verges. " * 30
    )


def _pages(chrome: ChromeProcess) -> list[dict[str, Any]]:
    return [t for t in cdp_targets(chrome.endpoint) if t.get("type") == "page"]


def _queued(service: ServiceProc) -> int:
    """Calls the service has taken in so far (each gets a ticket on arrival): the turns taken
    plus those waiting, read as one snapshot. A call that takes its turn between the two
    reads would be counted in neither, and the next caller would start before this one is in
    line (caller 18 fetched before caller 17 once, under load): read again until no turn was
    taken meanwhile."""
    while True:
        turns = len(service.events("service.turn"))
        waiting = _waiting(service)
        if len(service.events("service.turn")) == turns:
            return turns + waiting


def _waiting(service: ServiceProc) -> int:
    host, port = service.url.split("://", 1)[1].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request("GET", "/v1/status", headers={"Authorization": f"Bearer {service.token}"})
        return int(json.loads(conn.getresponse().read())["queue"]["waiting"])
    finally:
        conn.close()


@pytest.mark.slow
def test_twenty_callers_at_once_are_all_answered_on_screen_in_arrival_order_on_one_tab(
    shared_service: ServiceProc,  # noqa: F811
    chrome: ChromeProcess,
    http: LocalServer,
) -> None:
    service = shared_service
    warm = http.route("/burst-warm", Reply("<p>" + "warm text. " * 40))
    env = clean_env(SB_SERVICE_URL=service.url, SB_SERVICE_TOKEN=service.token)
    warmed = subprocess.run(
        ["python3", "-I", "-S", str(CLIENT_FILE), warm, "read", warm],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(warmed.stdout)["result"]["provider"] == "read"
    tabs_before = _pages(chrome)
    http.requests.clear()
    urls = [
        http.route(
            f"/burst/{i}",
            Reply(_article(i), delay_s=PAGE_DELAY_S),
        )
        for i in range(CALLERS)
    ]
    procs = []
    started = time.monotonic()
    for url in urls:  # a defined arrival order: each caller is in line before the next starts
        taken = _queued(service)
        procs.append(
            subprocess.Popen(
                ["python3", "-I", "-S", str(CLIENT_FILE), url, "read", url],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
        assert wait_until(lambda t=taken: _queued(service) > t, 10.0), "a caller never queued"
    answers = [json.loads(p.communicate(timeout=120)[0] or "null") for p in procs]
    took_s = time.monotonic() - started
    for index, answer in enumerate(answers):
        assert answer is not None and answer["result"] is not None, (index, answer)
        chain = [(hop["provider"], hop["ok"]) for hop in answer["chain"]]
        assert chain == [("read", True)], (index, chain, took_s)  # the screen, never Gemini
        assert answer["result"]["provider"] == "read"
        assert f"Caller {index} asked about kestrels." in answer["result"]["reply_text"]
    fetched = [path for path in http.requests if path.startswith("/burst/")]
    assert fetched == [f"/burst/{i}" for i in range(CALLERS)]  # first come, first served
    tabs = _pages(chrome)
    assert [t["id"] for t in tabs] == [t["id"] for t in tabs_before]  # the one owned tab
    assert urls[-1] in [t["url"] for t in tabs]  # which shows the last caller's page


class _CountingDriver(Driver):
    """Counts the operations that asked for the tab (the FIFO lock is taken in that order)."""

    arrived = 0

    async def run(
        self,
        op: str,
        fn: Any,
        *,
        timeout: float | None = None,
        show: Any = None,
        by: str | None = None,
    ) -> Any:
        self.arrived += 1
        return await super().run(op, fn, timeout=timeout, show=show, by=by)


@pytest.mark.serial  # holds the default deadline: the last caller is served within 13 s
def test_twenty_in_process_callers_at_the_default_deadline_all_get_the_screen(
    chrome: ChromeProcess, http: LocalServer, tmp_path: Path
) -> None:
    # In process each call's deadline runs while it waits for the tab: the read has 25 s less
    # Gemini's 12 s floor, so the last caller must be served within 13 s of the first.
    settings = make_settings(chrome, tmp_path)
    assert settings.call_deadline_s == 25.0 and settings.gemini_min_s == 12.0
    driver = _CountingDriver(settings)
    tool = BrowseTool(settings, driver=driver)
    urls = [
        http.route(f"/burst-in/{i}", Reply(_article(i), delay_s=PAGE_DELAY_S))
        for i in range(CALLERS)
    ]
    results: dict[int, Any] = {}

    def caller(n: int) -> None:
        results[n] = tool.run_sync(urls[n], action="read", url=urls[n], ctx=LIVE)

    try:
        warm = http.route("/burst-in-warm", Reply("<p>" + "warm text. " * 40))
        assert tool.run_sync(warm, action="read", url=warm, ctx=LIVE).result is not None
        http.requests.clear()
        threads = [threading.Thread(target=caller, args=(n,), daemon=True) for n in range(CALLERS)]
        for thread in threads:
            arrived = driver.arrived
            thread.start()  # a defined arrival order: each caller is in line before the next
            assert wait_until(lambda a=arrived: driver.arrived > a, 10.0), "a caller never queued"
        for thread in threads:
            thread.join(60)
        for n in range(CALLERS):
            walk = results[n]
            chain = [(hop.provider, hop.ok) for hop in walk.chain]
            assert chain == [("read", True)], (n, chain)  # the screen, never Gemini
            assert f"Caller {n} asked about kestrels." in walk.result.reply_text
        fetched = [path for path in http.requests if path.startswith("/burst-in/")]
        assert fetched == [f"/burst-in/{i}" for i in range(CALLERS)]
        assert len(_pages(chrome)) >= 1
    finally:
        tool.close()
