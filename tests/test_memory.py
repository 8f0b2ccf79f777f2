"""Flat memory: the driver's V8 flags are added only while it starts, never over the host's
own; heap trimming gives freed pages back to the system; the driver reattaches now and then."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from browser_core import SyncDriver
from browser_core._memory import DRIVER_NODE_FLAGS, driver_node_options
from browser_core.driver import _connection
from tests._server import LocalServer, Reply

# Time or memory is part of what it checks: `make test` runs it alone, after the rest.
pytestmark = pytest.mark.serial


def test_the_driver_flags_are_set_while_it_starts_and_removed_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NODE_OPTIONS", raising=False)
    with driver_node_options():
        assert os.environ["NODE_OPTIONS"] == " ".join(DRIVER_NODE_FLAGS)
    assert "NODE_OPTIONS" not in os.environ


def test_the_hosts_node_options_are_kept_and_its_own_flag_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NODE_OPTIONS", "--max-semi-space-size=16 --trace-warnings")
    with driver_node_options():
        assert os.environ["NODE_OPTIONS"] == "--max-semi-space-size=16 --trace-warnings"
    monkeypatch.setenv("NODE_OPTIONS", "--trace-warnings")
    with driver_node_options():
        assert os.environ["NODE_OPTIONS"].split() == ["--trace-warnings", *DRIVER_NODE_FLAGS]
    assert os.environ["NODE_OPTIONS"] == "--trace-warnings"


# A fresh Python frees 60 MB of 4 KB blocks made on a worker thread (as reads and searches
# do) while one block made last stays: glibc keeps the freed pages, so the resident size
# stays up; with `trim_heap()` they go back to the system. Prints the resident MB at the
# peak, after the free, and at the end.
TRIM_CODE = """
import os, sys, threading
from browser_core._memory import trim_heap

def rss_mb():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

kept = {}

def work():
    blocks = [bytearray(4000) for _ in range(15000)]
    for block in blocks:
        block[0] = 1
    kept["peak"], kept["last"] = rss_mb(), blocks[-1]
    blocks.clear()

thread = threading.Thread(target=work)
thread.start()
thread.join()
freed = rss_mb()
if sys.argv[1] == "trim":
    trim_heap()
    trim_heap()  # twice: nothing left to give back is not an error
print(kept["peak"], freed, rss_mb())
"""


def _resident_mb(mode: str) -> tuple[float, float, float]:
    out = subprocess.run(
        [sys.executable, "-c", TRIM_CODE, mode],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    peak, freed, end = (float(x) for x in out.stdout.split())
    return peak, freed, end


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_trim_heap_gives_freed_memory_back_to_the_system() -> None:
    peak, freed, kept = _resident_mb("keep")  # the control: the pages stay resident
    assert freed > peak - 10 and kept > peak - 10, (peak, freed, kept)
    peak, freed, trimmed = _resident_mb("trim")
    assert freed > peak - 10  # freed, still resident
    assert peak - trimmed > 40, (peak, freed, trimmed)  # most of the 60 MB given back


def test_the_driver_reattaches_every_recycle_ops_and_keeps_its_tab(
    sync_driver: SyncDriver, http: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dropping the connection and the Playwright driver frees what Playwright keeps per
    request; the owned tab (and whatever it shows) stays, and the next operation reattaches."""
    monkeypatch.setattr(_connection, "RECYCLE_OPS", 3)
    url = http.route("/recycle", Reply("<html><body><p>still here</p></body></html>"))

    async def visit(page: Any) -> str:
        await page.goto(url)
        return str(await page.inner_text("p"))

    drv = sync_driver.driver
    assert [sync_driver.run("visit", visit) for _ in range(2)] == ["still here"] * 2
    tab = drv._tab.target_id
    assert drv.connected
    sync_driver.run("visit", visit)  # the third operation recycles the connection after it
    sync_driver.call(drv.stage_done(), 10)  # after its answer, while the tab is still held
    assert (
        not drv.connected and drv._connection.playwright is None
    )  # the Playwright driver process is stopped
    assert sync_driver.run("visit", visit) == "still here"
    assert drv.connected and drv._tab.target_id == tab
