"""A short soak (`make soak` runs 500): mixed search, read, play and stop through the real
tool on locally served pages. No operation may fail, no tab may be left behind, and nothing
of ours may stay alive from one call to the next."""

from __future__ import annotations

import gc
import weakref
from collections import Counter
from collections.abc import Iterator

import pytest

from bench._common.fixtures import default_sets
from bench._common.stage import Stage, open_stage
from bench.soak.soak import (
    KINDS,
    Runner,
    Snapshot,
    SoakReport,
    connection_of,
    live_tasks,
    object_counts,
    plan,
    print_report,
    run_soak,
    serve_site,
)
from browser_core.stage._consent import controller_for

# Time or memory is part of what it checks: `make test` runs it alone, after the rest.
pytestmark = pytest.mark.serial

# What may differ between two counts taken after the stage's work is done: a CDP session of
# our world still closing in the background, a consent reply in flight.
SLACK = 3


@pytest.mark.slow
def test_a_dozen_mixed_operations_leave_no_failure_and_no_extra_tab() -> None:
    """`make soak` itself, in miniature (the object counts have the test below)."""
    report = run_soak(12, seed=3)
    assert report.failures == []
    assert report.after.tabs == report.before.tabs
    assert sum(report.counts.values()) == 12
    assert set(report.counts) <= set(KINDS) and {"search", "read"} <= set(report.counts)


@pytest.fixture
def site() -> Iterator[tuple[Runner, list[str]]]:
    """The soak's tool on its own Chromium and served pages, and the article URLs."""
    stage: Stage = open_stage()
    try:
        urls = serve_site(stage, default_sets(None), None)
        runner = Runner(stage)
        yield runner, urls
        runner.close()
    finally:
        stage.close()


def _ours(runner: Runner) -> Counter[str]:
    runner.settle()
    gc.collect()
    return object_counts(runner)[0]


@pytest.mark.slow
def test_sixty_mixed_operations_leave_nothing_of_ours_alive(
    site: tuple[Runner, list[str]],
) -> None:
    """After 20 calls and after 60, the same live Playwright objects of ours (CDP sessions,
    routes, handles, requests nobody navigated to), asyncio tasks and consent sessions:
    nothing grows with the calls. Playwright's own records of each navigation are counted
    apart (`object_counts`): it releases them only with the connection."""
    runner, urls = site
    ops = plan(60, urls, seed=5)
    for op in ops[:20]:
        runner.run(op)
    ours_20, tasks_20 = _ours(runner), live_tasks(runner)
    for op in ops[20:]:
        runner.run(op)
    ours_60, tasks_60 = _ours(runner), live_tasks(runner)
    assert sum(ours_60.values()) <= sum(ours_20.values()) + SLACK, (ours_20, ours_60)
    assert tasks_60 <= tasks_20 + SLACK, (tasks_20, tasks_60)
    page = runner.tool.driver._tab.page
    assert page is not None
    consent = controller_for(page)
    if consent is not None:  # one session for the tab, one per cross-site frame still shown
        assert len(consent._targets) <= 1 + len(page.frames), consent._targets


@pytest.mark.slow
def test_a_recycled_driver_leaves_the_old_connection_to_the_collector(
    site: tuple[Runner, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver drops its connection and stops Playwright every RECYCLE_OPS calls: what
    the stage kept per page (CDP sessions, our world, the consent controller) must not keep
    the old page, and with it the old connection and everything it held, alive in Python."""
    monkeypatch.setattr("browser_core.driver._connection.RECYCLE_OPS", 4)
    runner, urls = site
    ops = plan(6, urls, seed=7)
    for op in ops[:2]:
        runner.run(op)
    runner.settle()
    assert runner.tool.driver._tab.page is not None
    page = weakref.ref(runner.tool.driver._tab.page)
    connection = weakref.ref(connection_of(runner))
    for op in ops[2:]:  # the fourth call recycles, the fifth attaches again
        runner.run(op)
        runner.settle()  # a quiet moment: with a call waiting, the recycle would wait too
    gc.collect()
    assert connection_of(runner) is not connection(), "no recycle happened"
    assert page() is None, "the page of the dropped connection is still alive"
    assert connection() is None, "the dropped connection is still alive"


def _snap(python_mb: float, ours: int, kept: int) -> Snapshot:
    return Snapshot(2, python_mb, 150.0, 900.0, 300.0, 120.0, ours + kept, kept, 2)


def test_a_long_soak_is_headlined_by_the_growth_after_its_first_thousand_calls(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`make soak OPS=5000`: the last line is the growth from operation 1,000 to the end (the
    warm-up before it is not counted), in memory and in live Playwright objects."""
    curve = [(500, _snap(90.0, 20, 200)), (1000, _snap(96.0, 22, 300)), (1500, _snap(99.5, 21, 90))]
    report = SoakReport(1500, _snap(70.0, 20, 10), _snap(99.5, 21, 90), curve=curve)
    print_report(report)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == (
        "long soak: growth from operation 1000 to 1500: +3.5 MB (target < 20 MB: met); "
        "playwright objects -1 ours, -211 in all"
    )
