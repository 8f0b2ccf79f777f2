"""`make soak`: hundreds of mixed operations (search, read, play, stop) through the real tool.

Pages are served locally (a saved Google results page, saved articles, a minimal YouTube with
a real video) to a Chromium of our own. Reports tab count, our memory and Chrome's memory
before and after, the live Playwright objects (ours, and Playwright's own records of the
page's navigations) and asyncio tasks, timings per operation kind and every failure. Exit
code 1 when any operation failed or a tab leaked. `make soak OPS=5000` is the long soak: its
headline is the growth after the first thousand operations.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import os
import random
import secrets
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench._common.console_tab import ConsoleTab
from bench._common.fixtures import article_files, default_sets, find_heavy
from bench._common.serve import VIDEO_IDS, Served, add_youtube, read_page
from bench._common.stage import Stage, open_stage, proc_tree, tree_memory_mb
from browser_core import cdp_targets, configure_logging
from browser_core.testing import RECYCLE_OPS
from search.parsers.article import warm_up

ROOT = Path(__file__).resolve().parents[2]

KINDS = ("search", "read", "play", "stop")
WEIGHTS = (40, 35, 15, 10)
MEMORY_TARGET_MB = 50.0
CURVE_EVERY = 250  # operations between two points of the memory curve
PLATEAU_FROM, PLATEAU_TARGET_MB = 1000, 20.0  # growth after this operation, long runs only


@dataclass(frozen=True)
class Op:
    """One planned operation: its kind and argument (query or URL)."""

    index: int
    kind: str
    arg: str


@dataclass
class Snapshot:
    """Tabs and memory at one moment."""

    tabs: int
    python_rss_mb: float
    driver_rss_mb: float  # our other processes: the Playwright driver and the egress guard
    chrome_rss_mb: float
    chrome_pss_mb: float
    node_rss_mb: float = 0.0  # of which the Playwright driver (Node)
    pw_objects: int = 0  # Playwright objects alive in Python (the driver mirrors each one)
    pw_kept: int = 0  # of which Playwright's own records of navigations (see `object_counts`)
    tasks: int = 0  # asyncio tasks alive on the tool's event loop

    @property
    def pw_ours(self) -> int:
        """The live Playwright objects other than Playwright's navigation records."""
        return self.pw_objects - self.pw_kept


@dataclass
class SoakReport:
    """What a soak found. `failures` holds one line per failed operation."""

    ops: int
    before: Snapshot
    after: Snapshot
    counts: dict[str, int] = field(default_factory=dict)
    timings_ms: dict[str, list[float]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    # (operations done, snapshot) every CURVE_EVERY operations
    curve: list[tuple[int, Snapshot]] = field(default_factory=list)

    @property
    def leaked_tabs(self) -> int:
        return self.after.tabs - self.before.tabs

    @property
    def our_growth_mb(self) -> float:
        """Growth of this process plus its Playwright driver (not Chrome)."""
        return round(
            self.after.python_rss_mb
            + self.after.driver_rss_mb
            - self.before.python_rss_mb
            - self.before.driver_rss_mb,
            1,
        )

    @property
    def plateau_growth_mb(self) -> float | None:
        """Our growth from operation PLATEAU_FROM to the end (None for shorter runs)."""
        start = next((snap for done, snap in self.curve if done == PLATEAU_FROM), None)
        if start is None or self.ops <= PLATEAU_FROM:
            return None
        return round(_ours(self.after) - _ours(start), 1)

    @property
    def plateau_objects(self) -> tuple[int, int] | None:
        """Growth of the live Playwright objects (ours, all) from operation PLATEAU_FROM to
        the end (None for shorter runs)."""
        start = next((snap for done, snap in self.curve if done == PLATEAU_FROM), None)
        if start is None or self.ops <= PLATEAU_FROM:
            return None
        return self.after.pw_ours - start.pw_ours, self.after.pw_objects - start.pw_objects

    @property
    def ok(self) -> bool:
        return not self.failures and self.leaked_tabs == 0


# -- the served site ----------------------------------------------------------------------------


def serve_site(stage: Stage, fixtures: list[Path], heavy: Path | None) -> list[str]:
    """Google results, a handful of articles and YouTube on the stage; returns article URLs."""
    stage.server.add("/search", Served(read_page(find_heavy(fixtures, heavy))))
    add_youtube(stage.server)
    articles = article_files(fixtures)
    picks = [item for item in articles if item[0] <= 150_000][-6:] + articles[-1:]
    urls = []
    for n, (_size, path) in enumerate(picks):
        urls.append(stage.server.add(f"/article/{n}.html", Served(read_page(path))))
    return urls


def plan(count: int, article_urls: list[str], seed: int) -> list[Op]:
    """A reproducible mix: searches, reads, plays (by query and by URL) and stops."""
    rng = random.Random(seed)
    ops = []
    for index in range(count):
        kind = rng.choices(KINDS, WEIGHTS)[0]
        if kind == "search":
            arg = f"soak query {index} {rng.choice(['weather', 'news', 'recipe', '날씨'])}"
        elif kind == "read":
            arg = rng.choice(article_urls)
        elif kind == "play" and index % 2:
            arg = f"https://www.youtube.com/watch?v={rng.choice(VIDEO_IDS)}"
        else:
            arg = f"test pattern tone {index}" if kind == "play" else ""
        ops.append(Op(index, kind, arg))
    return ops


# -- running operations -------------------------------------------------------------------------


class Runner:
    """The tool under test, with one method per operation kind (each raises on failure)."""

    def __init__(self, stage: Stage) -> None:
        from search import BrowseTool, ToolContext

        self.stage = stage
        self.tool = BrowseTool(stage.settings)
        self.live = ToolContext(broadcasting=True)

    def _walk(self, query: str, action: str, url: str | None) -> Any:
        return self.tool.run_sync(query, action=action, url=url, ctx=self.live)

    def _routed(self, op: Op, action: str, provider: str) -> Any:
        url = op.arg if action == "read" else None
        walk = self._walk(op.arg, action, url)
        result = walk.result
        if result is None or not result.success or result.provider != provider:
            chain = ", ".join(
                f"{h.provider}:{h.failure_kind}:{(h.detail or '')[:120]}" for h in walk.chain
            )
            raise RuntimeError(f"no {provider} answer: {chain}")
        return result

    def search(self, op: Op) -> None:
        result = self._routed(op, "search", "google")
        if not result.data.get("results"):
            raise RuntimeError("google answered without results")

    def read(self, op: Op) -> None:
        result = self._routed(op, "read", "read")
        data = result.data
        if data.get("outcome") != "ok":
            raise RuntimeError(
                f"read outcome {data.get('outcome')} (HTTP {data.get('status')}, "
                f"final URL {str(data.get('final_url'))[:120]})"
            )

    def play(self, op: Op) -> None:
        result = self._routed(op, "play", "youtube")
        if not result.data.get("playing"):
            raise RuntimeError("youtube opened the video but it did not play")

    def stop(self, op: Op) -> None:
        from search.providers.youtube import control

        status = self.tool.loop.run(control(self.tool.driver, "stop", self.stage.settings), 20)
        if status.playing:
            raise RuntimeError("still playing after stop")

    def run(self, op: Op) -> None:
        handler: Callable[[Op], None] = getattr(self, op.kind)
        handler(op)

    def settle(self) -> None:
        """Wait until the stage's work after the last answer is done (the tab is free)."""
        self.tool.loop.run(self.tool.driver.stage_done(), 10)

    def close(self) -> None:
        try:
            self.tool.loop.run(self.tool.driver.close_owned_tab(), 10)
        finally:
            self.tool.close()


@dataclass
class _Served:
    """A walk as the service's answer carries it (the result and every hop)."""

    result: Any
    chain: list[Any]


class ServedRunner(Runner):
    """--console: every operation through `stream-browser serve` (in this process, on the
    same tool, as the service runs it) with a person's console tab open on it."""

    def __init__(self, stage: Stage) -> None:
        from pydantic import SecretStr

        from search.service import prepare

        super().__init__(stage)
        token = secrets.token_urlsafe(24)
        update = {
            "service_host": "127.0.0.1",
            "service_port": 0,
            "service_socket": None,
            "service_token": SecretStr(token),
        }
        self.served = prepare(stage.settings.model_copy(update=update), self.tool)
        self.served.listen()
        self._thread = threading.Thread(target=self.served.run, name="soak-service", daemon=True)
        self._thread.start()
        self.tab = ConsoleTab(self.served.url, token).start()

    def _walk(self, query: str, action: str, url: str | None) -> Any:
        from browser_core import Hop, ToolExecutionResult
        from search import client

        answer = client.browse(
            query,
            action=action,
            url=url,
            broadcasting=True,
            service_url=self.served.url,
            token=self.served.token,
        )
        if answer is None:
            return _Served(None, [])
        result = answer.get("result")
        chain = [Hop.model_validate(hop) for hop in answer.get("chain") or []]
        return _Served(ToolExecutionResult.model_validate(result) if result else None, chain)

    def stop(self, op: Op) -> None:
        walk = self._walk("", "stop", None)
        if walk.result is None or walk.result.data.get("playing"):
            raise RuntimeError("still playing after stop")

    def close(self) -> None:
        counts = self.tab.stop()
        print(
            f"console tab: {counts.states} state polls, {counts.frames} frames, "
            f"{counts.details} call details, {len(counts.errors)} errors {counts.errors[:3]}",
            flush=True,
        )
        self.served.stop()
        self._thread.join(30)
        super().close()


def connection_of(runner: Runner | None) -> Any:
    connection = getattr(runner.tool.driver, "_connection", None) if runner is not None else None
    pw = getattr(connection, "playwright", None)
    return getattr(getattr(pw, "_impl_obj", None), "_connection", None)


def _navigation_record(obj: Any) -> bool:
    """Is `obj` one of Playwright's own records of the page's navigations? Playwright 1.65
    reports every navigation's Request (and so its Response) whatever is subscribed, keeps
    every frame the page ever had, and releases them only with the page or the connection
    (the driver drops the connection every RECYCLE_OPS operations); no call disposes them."""
    kind = type(obj).__name__
    if kind == "Frame":
        return True
    request = getattr(obj, "request", None) if kind == "Response" else obj
    if kind not in ("Request", "Response") or request is None:
        return False
    try:
        return bool(request.is_navigation_request())
    except Exception:  # a request of a frame already gone: Playwright's all the same
        return True


def object_counts(runner: Runner | None) -> tuple[Counter[str], Counter[str]]:
    """The Playwright objects the connection holds alive, by type: (ours, kept), where `kept`
    are Playwright's navigation records (`_navigation_record`). Everything in `ours` (CDP
    sessions, routes, handles, requests nobody navigated to, ...) must stay flat."""
    connection = connection_of(runner)
    ours: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    for obj in list(getattr(connection, "_objects", {}).values()):
        (kept if _navigation_record(obj) else ours)[type(obj).__name__] += 1
    return ours, kept


def live_playwright_objects(runner: Runner | None) -> int:
    """How many Playwright objects (requests, responses, frames, sessions, ...) the connection
    holds: Playwright keeps each until its driver disposes of it, 10,000 per type at most."""
    return len(getattr(connection_of(runner), "_objects", {}) or {})


def live_tasks(runner: Runner | None) -> int:
    """The asyncio tasks alive on the tool's event loop (the stage's steps, guards' replies)."""
    if runner is None:
        return 0

    async def count() -> int:
        return len(asyncio.all_tasks())

    return int(runner.tool.loop.run(count(), 5))


def snapshot(stage: Stage, runner: Runner | None = None) -> Snapshot:
    """Tabs (CDP page targets) and memory: ours (this process and its children other than
    Chrome, i.e. the Playwright driver) and Chrome's whole process tree; the live Playwright
    objects and asyncio tasks, once the stage's work after the last answer is done."""
    if runner is not None:
        runner.settle()
    stage.server.clear_hits()  # the stand-in server's request log lives in this process
    gc.collect()
    time.sleep(0.5)
    tabs = len([t for t in cdp_targets(stage.endpoint, timeout=5) if t.get("type") == "page"])
    chrome = set(proc_tree(stage.chrome.pid))
    driver = [pid for pid in proc_tree(os.getpid()) if pid not in chrome and pid != os.getpid()]
    python_rss, _ = tree_memory_mb([os.getpid()])
    driver_rss, _ = tree_memory_mb(driver)
    node_rss, _ = tree_memory_mb([pid for pid in driver if _is_node_driver(pid)])
    chrome_rss, chrome_pss = tree_memory_mb(sorted(chrome))
    ours, kept = object_counts(runner)
    return Snapshot(
        tabs,
        round(python_rss, 1),
        round(driver_rss, 1),
        round(chrome_rss, 1),
        round(chrome_pss, 1),
        round(node_rss, 1),
        sum(ours.values()) + sum(kept.values()),
        sum(kept.values()),
        live_tasks(runner),
    )


def _is_node_driver(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return b"run-driver" in fh.read()
    except OSError:
        return False


def _ours(snap: Snapshot) -> float:
    return snap.python_rss_mb + snap.driver_rss_mb


def _curve_point(
    stage: Stage, runner: Runner, report: SoakReport, done: int, progress: bool
) -> None:
    snap = snapshot(stage, runner)
    report.curve.append((done, snap))
    if progress:
        growth = _ours(snap) - _ours(report.before)
        print(
            f"  {done:>5} ops: python {snap.python_rss_mb:6.1f} MB, driver+guard "
            f"{snap.driver_rss_mb:6.1f} MB (node {snap.node_rss_mb:.1f}), ours "
            f"{growth:+6.1f} MB, playwright objects {snap.pw_ours} ours + {snap.pw_kept} "
            f"navigation records, {snap.tasks} tasks, chrome PSS {snap.chrome_pss_mb:6.1f} MB, "
            f"{len(report.failures)} failures",
            file=sys.stderr,
            flush=True,
        )


def execute(runner: Runner, ops: list[Op], report: SoakReport, progress: bool) -> None:
    for op in ops:
        started = time.perf_counter()
        try:
            runner.run(op)
        except Exception as exc:  # every failure is recorded; none stops the soak
            report.failures.append(
                f"#{op.index} {op.kind} {op.arg[:80]!r}: {type(exc).__name__}: {str(exc)[:400]}"
            )
        report.timings_ms.setdefault(op.kind, []).append((time.perf_counter() - started) * 1000)
        report.counts[op.kind] = report.counts.get(op.kind, 0) + 1
        if (op.index + 1) % CURVE_EVERY == 0:
            _curve_point(runner.stage, runner, report, op.index + 1, progress)


def _warm(runner: Runner, op: Op, tries: int = 3) -> None:
    """A warm-up operation, tried again when a loaded machine makes the first one slow."""
    for attempt in range(1, tries + 1):
        try:
            runner.run(op)
            return
        except RuntimeError as exc:
            if attempt == tries:
                raise
            print(
                f"  warm-up {op.kind} failed ({str(exc)[:160]}); trying again",
                file=sys.stderr,
                flush=True,
            )


def run_soak(
    ops: int = 500,
    *,
    seed: int = 11,
    fixtures: list[Path] | None = None,
    heavy: Path | None = None,
    headful: bool = False,
    progress: bool = False,
    console: bool = False,
    **settings: Any,
) -> SoakReport:
    """Start a stage, warm the tool up, run `ops` operations, measure before and after."""
    sets = default_sets(fixtures)
    stage = open_stage(headful=headful, **settings)
    try:
        urls = serve_site(stage, sets, heavy)
        runner = ServedRunner(stage) if console else Runner(stage)
        try:
            warm = [
                Op(-4, "search", "warm up"),
                Op(-3, "read", urls[0]),
                Op(-2, "play", f"https://www.youtube.com/watch?v={VIDEO_IDS[0]}"),
                Op(-1, "stop", ""),
            ]
            warm_up()  # what `serve` builds on a thread at start
            for op in warm:
                _warm(runner, op)
            before = snapshot(stage, runner)
            report = SoakReport(ops, before, before)
            started = time.monotonic()
            execute(runner, plan(ops, urls, seed), report, progress)
            runner.run(Op(ops, "stop", ""))
            report.elapsed_s = round(time.monotonic() - started, 1)
            report.after = snapshot(stage, runner)
        finally:
            runner.close()
    finally:
        stage.close()
    return report


# -- printing -----------------------------------------------------------------------------------


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)] if ordered else math.nan


def print_report(report: SoakReport) -> None:
    b, a = report.before, report.after
    print(f"\nsoak: {report.ops} operations in {report.elapsed_s:.0f} s")
    print(f"{'op':<8} {'n':>4} {'median ms':>10} {'p95 ms':>9}")
    for kind in KINDS:
        times = report.timings_ms.get(kind, [])
        med = statistics.median(times) if times else math.nan
        print(f"{kind:<8} {len(times):>4} {med:>10.0f} {p95(times):>9.0f}")
    print(f"\n{'':<26} {'before':>9} {'after':>9} {'growth':>9}")
    rows = (
        ("tabs", b.tabs, a.tabs),
        ("ours: python RSS MB", b.python_rss_mb, a.python_rss_mb),
        ("ours: driver+guard RSS MB", b.driver_rss_mb, a.driver_rss_mb),
        ("  of which pw node RSS MB", b.node_rss_mb, a.node_rss_mb),
        ("chrome RSS MB (sum)", b.chrome_rss_mb, a.chrome_rss_mb),
        ("chrome PSS MB (sum)", b.chrome_pss_mb, a.chrome_pss_mb),
        ("playwright objects: ours", b.pw_ours, a.pw_ours),
        ("  navigation records", b.pw_kept, a.pw_kept),
        ("asyncio tasks", b.tasks, a.tasks),
    )
    for name, first, last in rows:
        print(f"{name:<26} {first:>9} {last:>9} {last - first:>+9.1f}")
    print_curve(report)
    for line in report.failures:
        print(f"  {line}")
    print_verdicts(report)


def print_verdicts(report: SoakReport) -> None:
    """The closing lines: failures, tabs, memory, objects; for a long soak, its headline
    (the growth after the first PLATEAU_FROM operations) last."""
    growth = report.our_growth_mb
    verdict = "met" if growth < MEMORY_TARGET_MB else "NOT met"
    print(
        f"\nfailures: {len(report.failures)}; leaked tabs: {report.leaked_tabs}; our memory "
        f"growth {growth:+.1f} MB (target < {MEMORY_TARGET_MB:.0f} MB: {verdict})"
    )
    b, a = report.before, report.after
    print(
        f"playwright objects alive: ours {b.pw_ours} -> {a.pw_ours} ({a.pw_ours - b.pw_ours:+d}); "
        f"navigation records {b.pw_kept} -> {a.pw_kept} (Playwright's own, released when the "
        f"driver drops its connection, every {RECYCLE_OPS} operations)"
    )
    plateau = report.plateau_growth_mb
    if plateau is not None:
        verdict = "met" if plateau < PLATEAU_TARGET_MB else "NOT met"
        ours, total = report.plateau_objects or (0, 0)
        print(
            f"long soak: growth from operation {PLATEAU_FROM} to {report.ops}: "
            f"{plateau:+.1f} MB (target < {PLATEAU_TARGET_MB:.0f} MB: {verdict}); "
            f"playwright objects {ours:+d} ours, {total:+d} in all"
        )


def print_curve(report: SoakReport) -> None:
    """Our memory every CURVE_EVERY operations: flat is the goal."""
    if not report.curve:
        return
    print(
        f"\n{'ops':>6} {'python MB':>10} {'pw node MB':>11} {'guard MB':>9} {'ours +MB':>9} "
        f"{'chrome PSS':>11} {'pw objects':>11} {'of them ours':>13} {'tasks':>6}"
    )
    points = [(0, report.before), *report.curve]
    if points[-1][0] != report.ops:
        points.append((report.ops, report.after))
    for done, snap in points:
        growth = _ours(snap) - _ours(report.before)
        guard = snap.driver_rss_mb - snap.node_rss_mb
        print(
            f"{done:>6} {snap.python_rss_mb:>10.1f} {snap.node_rss_mb:>11.1f} {guard:>9.1f} "
            f"{growth:>+9.1f} {snap.chrome_pss_mb:>11.1f} {snap.pw_objects:>11} "
            f"{snap.pw_ours:>13} {snap.tasks:>6}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="soak.py", description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=500, help="operations (default 500)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--fixtures", type=Path, action="append", help="folder of saved pages")
    parser.add_argument("--heavy", type=Path, help="the Google results page to serve")
    parser.add_argument("--headful", action="store_true", help="a visible Chromium (Xvfb)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the report")
    parser.add_argument("--log-level", default="error", help="the tool's log level (error)")
    parser.add_argument(
        "--console",
        action="store_true",
        help="every operation through the service, with a console tab open on it",
    )
    args = parser.parse_args(argv)
    configure_logging(args.log_level, "console")
    report = run_soak(
        args.ops,
        seed=args.seed,
        fixtures=args.fixtures,
        heavy=args.heavy,
        headful=args.headful,
        progress=True,
        console=args.console,
    )
    print_report(report)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(asdict(report), indent=2), encoding="utf-8")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
