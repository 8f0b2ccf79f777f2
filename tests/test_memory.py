"""Flat memory: the driver's V8 flags are added only while it starts, never over the host's
own; heap trimming is safe to call anywhere; the driver reattaches now and then."""

from __future__ import annotations

import os
from typing import Any

import pytest

from browser_core import SyncDriver, _driver
from browser_core._memory import DRIVER_NODE_FLAGS, driver_node_options, trim_heap
from tests._server import LocalServer, Reply


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


def test_trim_heap_returns_freed_memory_without_failing() -> None:
    blocks = [bytearray(300_000) for _ in range(50)]
    del blocks
    trim_heap()
    trim_heap()


def test_the_driver_reattaches_every_recycle_ops_and_keeps_its_tab(
    sync_driver: SyncDriver, http: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dropping the connection and the Playwright driver frees what Playwright keeps per
    request; the owned tab (and whatever it shows) stays, and the next operation reattaches."""
    monkeypatch.setattr(_driver, "RECYCLE_OPS", 3)
    url = http.route("/recycle", Reply("<html><body><p>still here</p></body></html>"))

    async def visit(page: Any) -> str:
        await page.goto(url)
        return str(await page.inner_text("p"))

    drv = sync_driver.driver
    assert [sync_driver.run("visit", visit) for _ in range(2)] == ["still here"] * 2
    tab = drv._target_id
    assert drv.connected
    sync_driver.run("visit", visit)  # the third operation recycles the connection after it
    sync_driver.call(drv.stage_done(), 10)  # after its answer, while the tab is still held
    assert not drv.connected and drv._pw is None  # the Playwright driver process is stopped
    assert sync_driver.run("visit", visit) == "still here"
    assert drv.connected and drv._target_id == tab
