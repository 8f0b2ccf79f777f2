"""`make soak`: hundreds of mixed operations (search, read, play, stop) through the real tool.

Pages are served locally (a saved Google results page, saved articles, a minimal YouTube with
a real video) to a Chromium of our own. Reports tab count, our memory and Chrome's memory
before and after, timings per operation kind and every failure. Exit code 1 when any
operation failed or a tab leaked.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
# Run as a script, this folder comes first on sys.path and `bench` would not be the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != BENCH]
sys.path.insert(0, str(ROOT))

from bench._fixtures import article_files, default_sets, find_heavy  # noqa: E402
from bench._serve import VIDEO_IDS, Served, add_youtube, read_page  # noqa: E402
from bench._stage import Stage, open_stage, proc_tree, tree_memory_mb  # noqa: E402
from browser_core import cdp_targets, configure_logging  # noqa: E402

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

    def _routed(self, op: Op, action: str, provider: str) -> Any:
        url = op.arg if action == "read" else None
        walk = self.tool.run_sync(op.arg, action=action, url=url, ctx=self.live)
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

    def close(self) -> None:
        try:
            self.tool.loop.run(self.tool.driver.close_owned_tab(), 10)
        finally:
            self.tool.close()


def live_playwright_objects(runner: Runner | None) -> int:
    """How many Playwright objects (requests, responses, routes, ...) the connection holds:
    Playwright keeps each until its driver disposes of it, 10,000 per type at most."""
    pw = getattr(runner.tool.driver, "_pw", None) if runner is not None else None
    connection = getattr(getattr(pw, "_impl_obj", None), "_connection", None)
    return len(getattr(connection, "_objects", {}) or {})


def snapshot(stage: Stage, runner: Runner | None = None) -> Snapshot:
    """Tabs (CDP page targets) and memory: ours (this process and its children other than
    Chrome, i.e. the Playwright driver) and Chrome's whole process tree."""
    gc.collect()
    time.sleep(0.5)
    tabs = len([t for t in cdp_targets(stage.endpoint, timeout=5) if t.get("type") == "page"])
    chrome = set(proc_tree(stage.chrome.pid))
    driver = [pid for pid in proc_tree(os.getpid()) if pid not in chrome and pid != os.getpid()]
    python_rss, _ = tree_memory_mb([os.getpid()])
    driver_rss, _ = tree_memory_mb(driver)
    node_rss, _ = tree_memory_mb([pid for pid in driver if _is_node_driver(pid)])
    chrome_rss, chrome_pss = tree_memory_mb(sorted(chrome))
    return Snapshot(
        tabs,
        round(python_rss, 1),
        round(driver_rss, 1),
        round(chrome_rss, 1),
        round(chrome_pss, 1),
        round(node_rss, 1),
        live_playwright_objects(runner),
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
            f"{growth:+6.1f} MB, {snap.pw_objects} playwright objects, chrome PSS "
            f"{snap.chrome_pss_mb:6.1f} MB, {len(report.failures)} failures",
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
    **settings: Any,
) -> SoakReport:
    """Start a stage, warm the tool up, run `ops` operations, measure before and after."""
    sets = default_sets(fixtures)
    stage = open_stage(headful=headful, **settings)
    try:
        urls = serve_site(stage, sets, heavy)
        runner = Runner(stage)
        try:
            warm = [
                Op(-4, "search", "warm up"),
                Op(-3, "read", urls[0]),
                Op(-2, "play", f"https://www.youtube.com/watch?v={VIDEO_IDS[0]}"),
                Op(-1, "stop", ""),
            ]
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
    )
    for name, first, last in rows:
        print(f"{name:<26} {first:>9} {last:>9} {last - first:>+9.1f}")
    print_curve(report)
    growth = report.our_growth_mb
    verdict = "met" if growth < MEMORY_TARGET_MB else "NOT met"
    print(
        f"\nfailures: {len(report.failures)}; leaked tabs: {report.leaked_tabs}; our memory "
        f"growth {growth:+.1f} MB (target < {MEMORY_TARGET_MB:.0f} MB: {verdict})"
    )
    plateau = report.plateau_growth_mb
    if plateau is not None:
        verdict = "met" if plateau < PLATEAU_TARGET_MB else "NOT met"
        print(
            f"growth from operation {PLATEAU_FROM} to {report.ops}: {plateau:+.1f} MB "
            f"(target < {PLATEAU_TARGET_MB:.0f} MB: {verdict})"
        )
    for line in report.failures:
        print(f"  {line}")


def print_curve(report: SoakReport) -> None:
    """Our memory every CURVE_EVERY operations: flat is the goal."""
    if not report.curve:
        return
    print(
        f"\n{'ops':>6} {'python MB':>10} {'pw node MB':>11} {'guard MB':>9} {'ours +MB':>9} "
        f"{'chrome PSS':>11} {'pw objects':>11}"
    )
    points = [(0, report.before), *report.curve]
    if points[-1][0] != report.ops:
        points.append((report.ops, report.after))
    for done, snap in points:
        growth = _ours(snap) - _ours(report.before)
        guard = snap.driver_rss_mb - snap.node_rss_mb
        print(
            f"{done:>6} {snap.python_rss_mb:>10.1f} {snap.node_rss_mb:>11.1f} {guard:>9.1f} "
            f"{growth:>+9.1f} {snap.chrome_pss_mb:>11.1f} {snap.pw_objects:>11}"
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
    args = parser.parse_args(argv)
    configure_logging(args.log_level, "console")
    report = run_soak(
        args.ops,
        seed=args.seed,
        fixtures=args.fixtures,
        heavy=args.heavy,
        headful=args.headful,
        progress=True,
    )
    print_report(report)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(asdict(report), indent=2), encoding="utf-8")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
