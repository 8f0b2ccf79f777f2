"""The cross-process lock on the owned tab, with real processes on the session's Chromium.

Six processes that each attach a driver of their own and read a page at the same moment must
leave one owned tab (not six), all be answered, and never drive the screen at the same time.
"""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from browser_core import ChromeProcess, OperationTimeout, SyncDriver, cdp_targets
from tests._server import LocalServer, Reply
from tests.conftest import make_settings

# Time or memory is part of what it checks: `make test` runs it alone, after the rest.
pytestmark = pytest.mark.serial


CHILD = """
import json, sys
from browser_core import SyncDriver, build_settings

port, state_dir, url = int(sys.argv[1]), sys.argv[2], sys.argv[3]
settings = build_settings(cdp_port=port, allow_hosts=("127.0.0.1",), state_dir=state_dir,
                          settle_ms=100, op_timeout_s=120, nav_timeout_s=30)
drv = SyncDriver(settings)

async def read(page):
    await drv.driver.navigate(page, url)
    return await page.inner_text("body")

try:
    text = drv.run("read", read)
    print("RESULT " + json.dumps({"text": text, "tab": drv.driver._tab.target_id}), flush=True)
finally:
    drv.shutdown(close_tab=False)
"""


async def title(page: Any) -> str:
    return str(await page.title())


def page_ids(endpoint: str) -> set[str]:
    return {t["id"] for t in cdp_targets(endpoint) if t["type"] == "page"}


class Overlap:
    """A page that takes a moment to serve and counts how many are served at once."""

    def __init__(self) -> None:
        self.active = self.most = self.served = 0
        self._guard = threading.Lock()

    def __call__(self, handler: Any) -> Reply:
        with self._guard:
            self.active += 1
            self.most = max(self.most, self.active)
        time.sleep(0.3)
        with self._guard:
            self.active -= 1
            self.served += 1
        return Reply("<p>six</p>")


def result_of(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=180)
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, err[-2000:]
    return dict(json.loads(lines[-1].removeprefix("RESULT ")))


@pytest.mark.slow
def test_six_processes_at_once_share_one_owned_tab_and_take_turns(
    chrome: ChromeProcess, http: LocalServer, tmp_path: Path
) -> None:
    overlap = Overlap()
    url = http.route("/six", overlap)
    state_dir = tmp_path / "state"
    before = page_ids(chrome.endpoint)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(chrome.port), str(state_dir), url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    results = [result_of(proc) for proc in procs]
    new_tabs = page_ids(chrome.endpoint) - before
    try:
        assert [r["text"] for r in results] == ["six"] * 6
        assert len(new_tabs) == 1, new_tabs
        assert {r["tab"] for r in results} == new_tabs  # every process used that one tab
        assert (overlap.served, overlap.most) == (6, 1)  # one at a time
    finally:
        cleanup = SyncDriver(make_settings(chrome, tmp_path))
        cleanup.run("adopt", title)  # adopts the owned tab from the state file ...
        cleanup.shutdown()  # ... and closes it


def test_a_driver_waiting_for_another_process_gets_a_clear_timeout(
    chrome: ChromeProcess, tmp_path: Path
) -> None:
    settings = make_settings(chrome, tmp_path)
    drv = SyncDriver(settings)
    lock_path = drv.driver._turn.tab_lock.path  # one lock file per CDP endpoint, in the state dir
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(  # another process holding the lock, as a CLI mid-call would
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time; f = open(sys.argv[1], 'a');"
            " fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
            str(lock_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(OperationTimeout, match="another process"):
            drv.run("read", title, timeout=0.5)
        holder.kill()
        holder.wait(10)
        with open(lock_path, "a") as probe:  # the kernel released it with the process
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(probe, fcntl.LOCK_UN)
        assert drv.run("title", title) == ""
    finally:
        holder.kill()
        holder.wait(10)
        if holder.stdout is not None:
            holder.stdout.close()
        drv.shutdown()
