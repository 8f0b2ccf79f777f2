"""Faults through the whole tool: Chrome killed or frozen mid-call, twenty callers at once,
and every way the Gemini CLI and REST API fail. Each call must end within its deadline with
its failure kind, fall through to Gemini where the route has it, leave no process behind,
and the same tool (no new process) must work again once Chrome is back.

Each Chrome test starts a Chromium of its own (bench._common.stage) behind a local HTTPS server
that stands in for www.google.com / www.youtube.com; the session Chrome is never touched.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from bench._common.serve import VIDEO_IDS, Served, add_youtube
from bench._common.stage import Stage, open_stage
from browser_core import Driver, Settings
from gemini.testing import FakeBehaviour, FakeGeminiApi, fake_calls, write_fake_gemini
from search import BrowseTool, ToolContext
from search._routing import Walk
from tests._service_proc import wait_until
from tests.conftest import make_settings

# Time or memory is part of what it checks: `make test` runs it alone, after the rest.
pytestmark = pytest.mark.serial


LIVE = ToolContext(broadcasting=True)
OFF = ToolContext(broadcasting=False)
SERP = (
    b"<!DOCTYPE html><html><head><title>q - Google Search</title></head><body>"
    b"<div id=search><div id=rso><div class=g><a href='https://example.com/a'>"
    b"<h3>Example result</h3></a><div class=VwiC3b>An example snippet.</div></div>"
    b"</div></div></body></html>"
)
DEADLINE_S = 8.0
SLACK_S = 2.5  # the tool's own bound is the deadline + 2 s
QUEUE_DEADLINE_S = 60.0


# -- helpers ----------------------------------------------------------------------------------


class Switch:
    """A served page that hangs while `hanging` is set."""

    def __init__(self, body: bytes, content_type: str = "text/html; charset=utf-8") -> None:
        self.body, self.content_type, self.hanging = body, content_type, False

    def __call__(self, path: str) -> Served:
        return Served(self.body, self.content_type, delay_s=60 if self.hanging else 0)


@pytest.fixture
def stage(tmp_path: Path) -> Iterator[Stage]:
    fake = write_fake_gemini(tmp_path / "bin", "success")
    stage = open_stage(
        tmp=tmp_path / "stage",
        call_deadline_s=DEADLINE_S,
        gemini_cli=str(fake),
        gemini_timeout_s=5,
        nav_timeout_s=6,
        settle_ms=200,
    )
    yield stage
    _signal(stage, signal.SIGCONT)
    stage.close()


def _signal(stage: Stage, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(stage.chrome.pid, sig)


def kill_chrome(stage: Stage) -> None:
    _signal(stage, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(stage.chrome.pid, 0)


def in_thread(fn: Any, *args: Any, **kw: Any) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def target() -> None:
        started = time.monotonic()
        out["value"] = fn(*args, **kw)
        out["elapsed"] = time.monotonic() - started

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, out


def gone(pid: int | None) -> bool:
    """No such process, or only a zombie left for its parent to reap."""
    if pid is None:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


# -- Chrome killed, frozen ---------------------------------------------------------------------


def test_chrome_killed_mid_search_falls_through_to_gemini_and_the_same_tool_recovers(
    stage: Stage,
) -> None:
    serp = Switch(SERP)
    stage.server.add("/search", serp)
    tool = BrowseTool(stage.settings)
    try:
        assert tool.call("warm up", action="search", ctx=LIVE).provider == "google"  # type: ignore[union-attr]
        serp.hanging = True
        thread, out = in_thread(tool.run_sync, "killed mid search", action="search", ctx=LIVE)
        assert stage.server.wait_for("/search?q=killed")
        kill_chrome(stage)
        thread.join(DEADLINE_S + SLACK_S + 2)
        walk: Walk = out["value"]
        assert out["elapsed"] < DEADLINE_S + SLACK_S
        assert walk.chain[0].provider == "google"
        assert walk.chain[0].failure_kind in ("cdp-unreachable", "timeout")
        assert walk.result is not None and walk.result.provider == "gemini-cli"

        stage.restart_chrome()
        serp.hanging = False
        again = tool.call("after the restart", action="search", ctx=LIVE)
        assert again is not None and again.provider == "google"
        assert tool.driver.connected
    finally:
        tool.close()


def test_chrome_killed_mid_playback_ends_the_call_cleanly_and_playback_works_after(
    stage: Stage,
) -> None:
    add_youtube(stage.server)
    video = Switch((Path(__file__).parent / "pages" / "test-video.webm").read_bytes(), "video/webm")
    stage.server.add("/test-video.webm", video)
    video.hanging = True
    tool = BrowseTool(stage.settings)
    url = f"https://www.youtube.com/watch?v={VIDEO_IDS[0]}"
    try:
        thread, out = in_thread(tool.run_sync, url, action="play", ctx=LIVE)
        assert stage.server.wait_for("/test-video.webm")
        kill_chrome(stage)
        thread.join(DEADLINE_S + SLACK_S + 2)
        walk: Walk = out["value"]
        assert out["elapsed"] < DEADLINE_S + SLACK_S
        assert walk.result is None  # play has no Gemini sibling: the brain is told "no"
        assert [(h.provider, h.failure_kind) for h in walk.chain] in (
            [("youtube", "cdp-unreachable")],
            [("youtube", "timeout")],
        )

        stage.restart_chrome()
        video.hanging = False
        played = tool.call(url, action="play", ctx=LIVE)
        assert played is not None and played.data["playing"] is True
    finally:
        tool.close()


def test_a_frozen_chrome_costs_one_deadline_then_gemini_answers_and_the_tool_recovers(
    stage: Stage,
) -> None:
    stage.server.add("/search", Served(SERP))
    tool = BrowseTool(stage.settings)
    try:
        assert tool.call("warm up", action="search", ctx=LIVE).provider == "google"  # type: ignore[union-attr]
        _signal(stage, signal.SIGSTOP)
        started = time.monotonic()
        walk = tool.run_sync("while frozen", action="search", ctx=LIVE)
        assert time.monotonic() - started < DEADLINE_S + SLACK_S
        assert walk.chain[0].failure_kind in ("timeout", "cdp-unreachable")
        assert walk.result is not None and walk.result.provider == "gemini-cli"
        _signal(stage, signal.SIGCONT)
        again = tool.call("thawed", action="search", ctx=LIVE)
        assert again is not None and again.provider == "google"
    finally:
        _signal(stage, signal.SIGCONT)
        tool.close()


# -- twenty callers at once --------------------------------------------------------------------


class WatchedDriver(Driver):
    """Counts the operations that arrived, and how many run on the owned tab at once."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.active = 0
        self.most = 0
        self.arrived = 0

    async def run(
        self,
        op: str,
        fn: Any,
        *,
        timeout: float | None = None,
        show: Any = None,
        by: str | None = None,
    ) -> Any:
        self.arrived += 1  # queued (the FIFO lock is taken in arrival order)

        async def watched(page: Any) -> Any:
            self.active += 1
            self.most = max(self.most, self.active)
            try:
                return await fn(page)
            finally:
                self.active -= 1

        async def shown(page: Any, answer: Any) -> Any:  # the stage after the answer, too
            self.active += 1
            self.most = max(self.most, self.active)
            try:
                return await show(page, answer) if show is not None else None
            finally:
                self.active -= 1

        return await super().run(op, watched, timeout=timeout, show=shown, by=by)


def test_twenty_threads_are_all_answered_in_order_and_never_share_the_tab(
    stage: Stage,
) -> None:
    stage.server.add("/search", Served(SERP, delay_s=0.15))
    # Time for all twenty one after another, even on a loaded machine: here a caller that
    # falls back to Gemini would be a lost answer (a deadline's own bound is tested above).
    settings = stage.settings.model_copy(update={"call_deadline_s": QUEUE_DEADLINE_S})
    driver = WatchedDriver(settings)
    tool = BrowseTool(settings, driver=driver)
    results: dict[int, Any] = {}
    elapsed: dict[int, float] = {}

    def worker(n: int) -> None:
        started = time.monotonic()
        results[n] = tool.call(f"caller {n:02d}", action="search", ctx=LIVE)
        elapsed[n] = time.monotonic() - started

    try:
        assert tool.call("warm up", action="search", ctx=LIVE) is not None
        stage.server.clear_hits()
        threads = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(20)]
        for n, thread in enumerate(threads):
            queued = driver.arrived
            thread.start()  # a defined arrival order: each caller queues before the next starts
            assert wait_until(lambda q=queued: driver.arrived > q, 10.0), f"caller {n} never queued"
        for thread in threads:
            thread.join(QUEUE_DEADLINE_S + SLACK_S + 5)
    finally:
        tool.close()
    assert sorted(results) == list(range(20))  # none lost
    assert all(seconds < QUEUE_DEADLINE_S + SLACK_S for seconds in elapsed.values())
    # Each caller got Google's answer to its own question, none a fallback's or a neighbour's.
    answers = {n: (r.provider, r.query) if r is not None else None for n, r in results.items()}
    assert answers == {n: ("google", f"caller {n:02d}") for n in range(20)}
    assert all("Example result" in r.reply_text for r in results.values() if r is not None)
    assert driver.most == 1
    served = [p.split("q=caller+")[1][:2] for p in stage.server.seen if "q=caller+" in p]
    # First come, first served, each asked once: a caller's results page may come once more
    # only on its own way back from a top result that failed to load, before the next caller.
    assert list(dict.fromkeys(served)) == [f"{n:02d}" for n in range(20)]
    assert all(a <= b for a, b in itertools.pairwise(served)), served
    assert max(served.count(n) for n in set(served)) <= 2, served


# -- Gemini failing, through the tool (broadcast off: Gemini is the only provider) --------------


def _gemini_only(tmp_path: Path, **extra: Any) -> BrowseTool:
    values: dict[str, Any] = {
        "call_deadline_s": 6.0,
        "gemini_timeout_s": 2.0,
        "gemini_rest_timeout_s": 1.5,
    }
    values.update(extra)
    return BrowseTool(make_settings(None, tmp_path, **values))


CRASH = FakeBehaviour(
    stderr="FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n",
    exit_code=134,
)


@pytest.mark.parametrize(
    ("behaviour", "kind"),
    [
        ("hang", "gemini-timeout"),
        (CRASH, "gemini-cli-error"),
        ("garbage", "gemini-bad-response"),
        ("empty", "gemini-cli-error"),
    ],
    ids=["hanging", "crashing", "garbage", "silent"],
)
def test_a_failing_gemini_cli_gives_none_with_its_kind_in_time_and_leaves_no_process(
    tmp_path: Path, behaviour: Any, kind: str
) -> None:
    fake = write_fake_gemini(tmp_path / "bin", behaviour)
    tool = _gemini_only(tmp_path, gemini_cli=str(fake))
    started = time.monotonic()
    try:
        walk = tool.run_sync("why is the sky blue", action="search", ctx=OFF)
    finally:
        tool.close()
    assert time.monotonic() - started < 6.0 + SLACK_S
    assert walk.result is None
    assert [(h.provider, h.failure_kind) for h in walk.chain] == [("gemini", kind)]
    calls = fake_calls(tmp_path / "bin")
    assert len(calls) == 1
    assert wait_until(lambda: gone(calls[0]["pid"]) and gone(calls[0]["child_pid"]), 3.0)


SECRET = "AIzaSy-TEST-KEY-must-never-show-up"


@pytest.mark.parametrize(
    ("scenario", "kind"),
    [
        ("slow", "gemini-timeout"),
        ("drop", "gemini-unavailable"),
        ("quota", "gemini-quota"),
        ("server-error", "gemini-unavailable"),
        ("leaky", "gemini-auth"),
    ],
)
def test_a_failing_gemini_api_gives_none_with_its_kind_in_time_and_never_the_key(
    tmp_path: Path, scenario: str, kind: str
) -> None:
    with FakeGeminiApi({"m1": scenario}, slow_s=5.0) as api, capture_logs() as logs:
        tool = _gemini_only(
            tmp_path,
            gemini_auth="apikey",
            gemini_api_key=SECRET,
            gemini_api_base=api.base_url,
            gemini_model="m1",
            gemini_fallback_models=("m1",),
        )
        started = time.monotonic()
        try:
            walk = tool.run_sync("why is the sky blue", action="search", ctx=OFF)
        finally:
            tool.close()
        elapsed = time.monotonic() - started
    assert elapsed < 6.0 + SLACK_S
    assert walk.result is None
    assert [(h.provider, h.failure_kind) for h in walk.chain] == [("gemini", kind)]
    assert SECRET not in repr(walk.chain) + repr(logs)
    assert all(SECRET not in r.path for r in api.requests)
