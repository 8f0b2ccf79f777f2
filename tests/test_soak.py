"""A short soak (`make soak` runs 500): mixed search, read, play and stop through the real
tool on locally served pages. No operation may fail and no tab may be left behind."""

from __future__ import annotations

import pytest

from bench.soak import KINDS, run_soak


@pytest.mark.slow
def test_forty_mixed_operations_leave_no_failure_and_no_extra_tab() -> None:
    report = run_soak(40, seed=3)
    assert report.failures == []
    assert report.after.tabs == report.before.tabs
    assert sum(report.counts.values()) == 40
    assert set(report.counts) <= set(KINDS) and {"search", "read"} <= set(report.counts)
