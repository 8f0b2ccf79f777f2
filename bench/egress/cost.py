"""What the egress guard costs, taken apart: goto + content of the same pages in Chromiums
that differ in one thing each (the arms of `bench.egress._arms`: behind the guard, the same launch
without the proxy switch, a second one without (the control), behind a plain pass-through
SOCKS5 server, behind the guard with its policy checks off, the bench's own Chromium), calls
interleaved with the order rotated, medians and each arm's ratio to the one without the
guard; printed with how the arms' switches and preferences differ, each load's phases per
arm, the proxies' CPU and refusals per page, and `_phases`: one connection step by
step.

Standalone, in seconds rather than the whole bench's minutes:
`python -m bench.egress [--rounds 30] [--arms guard,bare,control,socks,unchecked,stage]`.
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

from bench.egress._arms import (
    ARMS,
    DEFAULT_ARMS,
    LABELS,
    Arm,
    Refuser,
    close_arm,
    differences,
    launch_arm,
)
from bench.egress._phases import resolution_phases, socket_phases

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


def _cpu_s(pid: int | None) -> float:
    """User + system CPU seconds a process (a proxy) has used (Linux /proc)."""
    if not pid:
        return float("nan")
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _log_lines(path: Path | None) -> int:
    if path is None:
        return 0
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


def _proxy_cost(arm: Arm, since: tuple[float, int], loads: int) -> str:
    """The arm's proxy: CPU and refused connections per page load since `since`."""
    cpu_ms = (_cpu_s(arm.proxy_pid) - since[0]) * 1000 / loads
    refused = (_log_lines(arm.proxy_log) - since[1]) / loads
    who = "guard" if arm.name in ("guard", "stage") else "proxy"
    return f"{who} CPU {cpu_ms:.1f} ms a page, {refused:.0f} connections refused a page"


def _ratio_line(label: str, tab: Tab, bare: Tab, extra: str = "") -> str:
    ratio = statistics.median(tab.ms) / statistics.median(bare.ms)
    low, high = ratio_interval(tab.ms, bare.ms)
    tail = f"; {extra}" if extra else ""
    return (
        f"         {label} against the first: {ratio:.2f}, 90% interval {low:.2f}-{high:.2f}{tail}"
    )


def _workload_lines(
    name: str, tabs: dict[str, Tab], rounds: int, load: float, extra: dict[str, str]
) -> list[str]:
    bare, lines = tabs["bare"], []
    guarded = tabs.get("guard")
    if guarded is not None:
        g, u = statistics.median(guarded.ms), statistics.median(bare.ms)
        low, high = ratio_interval(guarded.ms, bare.ms)
        target, kind = target_for_load(load)
        verdict = "ok" if g / u <= target else "OVER"
        lines.append(
            f"  {name:<6} behind the guard {g:7.0f} ms, without {u:7.0f} ms (medians of "
            f"{rounds}); ratio {g / u:.2f}, 90% interval {low:.2f}-{high:.2f} "
            f"(target for a {kind} machine <= {target:.2f}: {verdict})"
        )
    else:
        lines.append(f"  {name:<6} without the guard {statistics.median(bare.ms):7.0f} ms")
    for arm, tab in tabs.items():
        if arm not in ("bare", "guard"):
            label = (
                "control, a second Chromium without the guard" if arm == "control" else LABELS[arm]
            )
            lines.append(_ratio_line(label, tab, bare, extra.get(arm, "")))
    if guarded is not None:
        steps = ", ".join(
            f"{step} {guarded.nav_median(i):.1f}/{bare.nav_median(i):.1f}"
            for i, step in enumerate(_NAV_NAMES)
        )
        lines.append(f"         phases, guarded/without, ms: {steps}; {extra.get('guard', '')}")
    lines.append(f"         phases of every arm, ms ({', '.join(_NAV_NAMES)}):")
    for arm, tab in tabs.items():
        steps = " ".join(f"{tab.nav_median(i):7.1f}" for i in range(len(_NAV_NAMES)))
        lines.append(f"           {arm:<9} {steps}")
    return lines


def _pages(floor: Any, arms: list[Arm], browsers: list[Any]) -> dict[str, Any]:
    """One tab per arm: a new one in each Chromium started here, the floor row's in `stage`."""
    pages = {}
    for arm in arms:
        if arm.name == "stage":
            pages[arm.name] = floor.page
            continue
        browser = floor._pw.chromium.connect_over_cdp(arm.chrome.endpoint)
        browsers.append(browser)
        pages[arm.name] = browser.contexts[0].new_page()
    return pages


def _measure_arms(floor: Any, bench: Any, arms: list[Arm], rounds: int, warmup: int) -> list[str]:
    load, lines = os.getloadavg()[0], []
    browsers: list[Any] = []
    try:
        pages = _pages(floor, arms, browsers)
        for work in bench.workloads:
            tabs = {arm.name: Tab() for arm in arms}
            since = {a.name: (_cpu_s(a.proxy_pid), _log_lines(a.proxy_log)) for a in arms}
            _measure([(pages[a.name], tabs[a.name]) for a in arms], floor.url(work), rounds, warmup)
            extra = {
                a.name: _proxy_cost(a, since[a.name], warmup + rounds) for a in arms if a.proxied
            }
            lines += _workload_lines(work.name, tabs, rounds, load, extra)
    finally:
        for browser in browsers:
            with contextlib.suppress(Exception):
                browser.close()
    return lines


def egress_cost(
    floor: Any, bench: Any, rounds: int, warmup: int = 2, arms: tuple[str, ...] = DEFAULT_ARMS
) -> list[str]:
    """Lines for the report. `floor` is the bench's bare-Playwright row (its Playwright runs
    every arm's tab; its own tab is the `stage` arm's); every other arm is a Chromium started
    here, with identical switches and preferences but for the proxy (see `bench.egress._arms`)."""
    unknown = [a for a in arms if a not in ARMS]
    if unknown or "bare" not in arms:
        raise ValueError(f"arms must include bare and be among {', '.join(ARMS)}: {arms}")
    lines = [f"  {_load()} before"]
    refuser, started = Refuser(), []
    try:
        for name in arms:
            started.append(launch_arm(name, bench.stage, refuser))
        lines += differences(started)
        lines += _measure_arms(floor, bench, started, rounds, warmup)
    finally:
        for arm in started:
            close_arm(arm)
        refuser.close()
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


def parse_arms(text: str) -> tuple[str, ...]:
    """`--arms guard,bare,...` as a tuple, checked (an unknown arm is a usage error)."""
    arms = tuple(a.strip() for a in text.split(",") if a.strip())
    unknown = [a for a in arms if a not in ARMS]
    if unknown or "bare" not in arms:
        raise argparse.ArgumentTypeError(
            f"unknown arm {', '.join(unknown)}: choose among {', '.join(ARMS)}"
            if unknown
            else "the arms must include bare (the one every ratio is against)"
        )
    return arms


def main(argv: list[str] | None = None) -> int:
    from bench._common.fixtures import default_sets, find_heavy, find_light
    from bench._common.workloads import FloorRow, open_bench

    parser = argparse.ArgumentParser(prog="python -m bench.egress", description=__doc__)
    parser.add_argument("--rounds", type=int, default=30, help="timed rounds (default 30)")
    parser.add_argument(
        "--arms",
        type=parse_arms,
        default=DEFAULT_ARMS,
        help=f"comma-separated, among {','.join(ARMS)} (default {','.join(DEFAULT_ARMS)})",
    )
    args = parser.parse_args(argv)
    fixtures = default_sets(None)
    bench = open_bench(find_heavy(fixtures), find_light(fixtures), headful=False)
    floor = None
    try:
        floor = FloorRow(bench.stage)
        for work in bench.workloads:  # warm: connect and load each page once, untimed
            floor.run(work)
        print("egress guard: goto + content, the same pages in each arm's Chromium:")
        print("\n".join(egress_cost(floor, bench, args.rounds, arms=args.arms)), flush=True)
    finally:
        if floor is not None:
            floor.close()
        bench.stage.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
