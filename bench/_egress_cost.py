"""What the egress guard costs: goto + content of the same pages in the bench's Chromium
(behind the guard) and in a second Chromium without it, calls interleaved, medians and ratio;
a third Chromium, also without the guard, is the control (two Chromiums with no guard differ
by that much); printed beside where the time goes (each load's phases in both tabs, the
guard's CPU and refusals per page, and `_egress_phases`: one connection step by step).

Standalone, in seconds rather than the whole bench's minutes:
`python -m bench._egress_cost [--rounds 30]`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._egress_phases import resolution_phases, socket_phases
from browser_core import launch_chrome, stop_pid
from browser_core.testing import free_port

TARGET_IDLE = 1.05
TARGET_BUSY = 1.10
# One load's timing, in ms: [goto called to navigation start, start to request (unload,
# proxy, connection), connect, first byte, body, body end to DCL, DCL to goto returned,
# content()]. The first and the last two are measured against the wall clock (`timeOrigin`).
_NAV = """() => { const n = performance.getEntriesByType('navigation')[0];
  return [performance.timeOrigin, n.requestStart - n.startTime,
          n.connectEnd - n.connectStart, n.responseStart - n.requestStart,
          n.responseEnd - n.responseStart, n.domContentLoadedEventEnd - n.responseEnd,
          n.domContentLoadedEventEnd]; }"""
_NAV_NAMES = (
    "goto to start",
    "start to request",
    "connect",
    "first byte",
    "body",
    "body to DCL",
    "DCL to goto's return",
    "content()",
)


@dataclass
class Tab:
    """One tab's timings on one workload: wall ms of goto + content, and each load's phases."""

    ms: list[float] = field(default_factory=list)
    nav: list[list[float]] = field(default_factory=list)

    def nav_median(self, i: int) -> float:
        return statistics.median(n[i] for n in self.nav) if self.nav else float("nan")


def _timed(page: Any, url: str) -> tuple[float, list[float]]:
    """Wall ms of goto + content, and the load's phases (`_NAV_NAMES`)."""
    started, wall = time.perf_counter(), time.time() * 1000
    page.goto(url, wait_until="domcontentloaded")
    returned, wall_returned = time.perf_counter(), time.time() * 1000
    page.content()
    ended = time.perf_counter()
    origin, *steps, dcl = (float(x) for x in page.evaluate(_NAV))
    phases = [origin - wall, *steps, wall_returned - (origin + dcl), (ended - returned) * 1000]
    return (ended - started) * 1000, phases


def _guard_cpu_s(pid: int | None) -> float:
    """User + system CPU seconds the guard process has used (Linux /proc)."""
    if not pid:
        return float("nan")
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _log_lines(path: Path) -> int:
    try:
        with path.open("rb") as fh:
            return sum(1 for _ in fh)
    except OSError:
        return 0


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min) / {five:.2f} (5 min) on {os.cpu_count()} cores"


def target_for_load(load: float | None = None) -> tuple[float, str]:
    """The target that applies: idle (the 1-minute load before the run below the core count)
    or busy. The bench's own Chromiums load the machine while it runs, so the load is read
    before."""
    idle = (os.getloadavg()[0] if load is None else load) < (os.cpu_count() or 1)
    return (TARGET_IDLE, "idle") if idle else (TARGET_BUSY, "busy")


def _measure(pages: list[tuple[Any, Tab]], url: str, rounds: int, warmup: int) -> None:
    """Load `url` in every page once a round, the order rotated each round."""
    for i in range(warmup + rounds):
        turn = i % len(pages)
        for page, tab in pages[turn:] + pages[:turn]:
            ms, phases = _timed(page, url)
            if i >= warmup:
                tab.ms.append(ms)
                tab.nav.append(phases)


def ratio_interval(
    guarded: list[float], bare: list[float], draws: int = 2000
) -> tuple[float, float]:
    """A 90% bootstrap interval of median(guarded) / median(bare): the rounds are resampled in
    their interleaved pairs (a pair shares the machine's state at that moment)."""
    rng = random.Random(0)
    pairs = list(zip(guarded, bare, strict=True))
    ratios = []
    for _ in range(draws):
        sample = rng.choices(pairs, k=len(pairs))
        ratios.append(
            statistics.median(g for g, _ in sample) / statistics.median(b for _, b in sample)
        )
    ratios.sort()
    return ratios[int(0.05 * draws)], ratios[int(0.95 * draws) - 1]


@dataclass
class Workload:
    """One page's three tabs: behind the guard, without it, and a second Chromium without it
    (the control: how far two Chromiums differ with no guard in either)."""

    guarded: Tab = field(default_factory=Tab)
    bare: Tab = field(default_factory=Tab)
    control: Tab = field(default_factory=Tab)


def _workload_lines(name: str, work: Workload, rounds: int, load: float, extra: str) -> list[str]:
    g, u = statistics.median(work.guarded.ms), statistics.median(work.bare.ms)
    low, high = ratio_interval(work.guarded.ms, work.bare.ms)
    c_low, c_high = ratio_interval(work.control.ms, work.bare.ms)
    control = statistics.median(work.control.ms) / u
    target, kind = target_for_load(load)
    verdict = "ok" if g / u <= target else "OVER"
    steps = ", ".join(
        f"{step} {work.guarded.nav_median(i):.1f}/{work.bare.nav_median(i):.1f}"
        for i, step in enumerate(_NAV_NAMES)
    )
    return [
        f"  {name:<6} behind the guard {g:7.0f} ms, without {u:7.0f} ms (medians of "
        f"{rounds}); ratio {g / u:.2f}, 90% interval {low:.2f}-{high:.2f} "
        f"(target for a {kind} machine <= {target:.2f}: {verdict})",
        f"         control, a second Chromium without the guard against the first: "
        f"{control:.2f}, 90% interval {c_low:.2f}-{c_high:.2f} (what two Chromiums differ by)",
        f"         phases, guarded/without, ms: {steps}; {extra}",
    ]


def _unguarded(stage: Any, name: str) -> Any:
    return launch_chrome(
        port=free_port(),
        user_data_dir=str(stage.tmp / name),
        headless=stage.chrome.headless,
        egress=False,
        extra_args=stage.server.chrome_args(),
    )


def egress_cost(floor: Any, bench: Any, rounds: int, warmup: int = 2) -> list[str]:
    """Lines for the report. `floor` is the bench's bare-Playwright row (its tab is behind the
    guard); the comparison tab lives in a Chromium started without the guard, and the control
    tab in a second one."""
    stage = bench.stage
    guard_log = Path(stage.chrome.user_data_dir) / "egress-guard.log"
    load = os.getloadavg()[0]
    lines = [f"  {_load()} before"]
    chromes = [_unguarded(stage, "profile-unguarded"), _unguarded(stage, "profile-control")]
    browsers: list[Any] = []
    try:
        browsers = [floor._pw.chromium.connect_over_cdp(c.endpoint) for c in chromes]
        bare, control = (b.contexts[0].new_page() for b in browsers)
        for work in bench.workloads:
            tabs = Workload()
            cpu, refused = _guard_cpu_s(stage.chrome.egress_pid), _log_lines(guard_log)
            pages = [(floor.page, tabs.guarded), (bare, tabs.bare), (control, tabs.control)]
            _measure(pages, floor.url(work), rounds, warmup)
            loads = warmup + rounds
            cpu_ms = (_guard_cpu_s(stage.chrome.egress_pid) - cpu) * 1000 / loads
            per_page = (_log_lines(guard_log) - refused) / loads
            extra = f"guard CPU {cpu_ms:.1f} ms a page, {per_page:.0f} connections refused a page"
            lines += _workload_lines(work.name, tabs, rounds, load, extra)
    finally:
        for browser in browsers:
            with contextlib.suppress(Exception):
                browser.close()
        for chrome in chromes:
            stop_pid(chrome.pid)
    lines.append(f"  {_load()} after")
    return lines + breakdown(bench, rounds)


def breakdown(bench: Any, rounds: int) -> list[str]:
    """One connection through the bench's guard, step by step, against the same server."""
    stage = bench.stage
    if not stage.chrome.egress_port:
        return ["  (no guard on this Chromium: no per-connection breakdown)"]
    paths = {w.name: _path(w, stage.server.origin) for w in bench.workloads}
    lines = [f"  per connection (medians of {rounds}, interleaved with direct):"]
    lines += socket_phases(stage.chrome.egress_port, stage.server.port, paths, rounds)
    return lines + resolution_phases(rounds)


def _path(work: Any, origin: str) -> str:
    return "/search" if work.action == "search" else str(work.target).removeprefix(origin)


def main(argv: list[str] | None = None) -> int:
    from bench._fixtures import default_sets, find_heavy, find_light
    from bench._workloads import FloorRow, open_bench

    parser = argparse.ArgumentParser(prog="python -m bench._egress_cost", description=__doc__)
    parser.add_argument("--rounds", type=int, default=30, help="timed rounds (default 30)")
    args = parser.parse_args(argv)
    fixtures = default_sets(None)
    bench = open_bench(find_heavy(fixtures), find_light(fixtures), headful=False)
    floor = None
    try:
        floor = FloorRow(bench.stage)
        for work in bench.workloads:  # warm: connect and load each page once, untimed
            floor.run(work)
        print("egress guard: goto + content, this Chromium (behind it) vs one without it:")
        print("\n".join(egress_cost(floor, bench, args.rounds)), flush=True)
    finally:
        if floor is not None:
            floor.close()
        bench.stage.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
