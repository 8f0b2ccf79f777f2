"""browser_core._memory: the driver's V8 flags are added only while it starts, never over
the host's own, and heap trimming is safe to call anywhere."""

from __future__ import annotations

import os

import pytest

from browser_core._memory import DRIVER_NODE_FLAGS, driver_node_options, trim_heap


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
