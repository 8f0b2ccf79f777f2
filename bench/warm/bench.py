"""`make bench`: the warm in-process tool against the Node process-per-query it replaces.

Rows on one local Chromium (rows 5 and 6 through `stream-browser serve`, a service each), the
same saved pages served the same way to all (a local HTTPS server behind Chromium's resolver
rules, never a Python route handler), calls interleaved in a shuffled order so machine noise
hits every row alike; row 8, row 1's twin, is the control (what two identical rows differ by
in one run); row 7, the CLI's start-up alone beside the interpreter's (`_startup`). Prints
one table, the ratios `speedup-heavy`, `speedup-light`, `overhead-*`, `client-overhead-*`,
`control-*`, `speedup-cli-*`, `cli-startup`, what serving costs, page-read extraction time on the
largest articles, the Gemini CLI wrapper's overhead, and the burst row (ten reads queued at
once against the same reads one by one).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import json
import math
import os
import random
import shutil
import ssl
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench._common.console_tab import ConsoleTab
from bench._common.fixtures import article_files, default_sets, find_heavy, find_light
from bench._common.serve import read_page
from bench._common.stage import Stage
from bench._common.workloads import QUERY, Bench, FloorRow, Workload, open_bench
from bench.egress._arms import ARMS, DEFAULT_ARMS
from bench.egress.cost import egress_cost, parse_arms, ratio_interval
from bench.stage.cost import stage_cost
from bench.warm._burst import burst_cost
from bench.warm._layers import layer_breakdown
from bench.warm._startup import LABELS as STARTUP_LABELS
from bench.warm._startup import measure_startup
from browser_core import build_settings, configure_logging

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"

NODE_SCRIPT = BENCH / "browse-search.mjs"
SB_CLI = ROOT / ".venv" / "bin" / "stream-browser"
ROW_LABELS = {
    1: "1 warm in-process BrowseTool",
    2: "2 Node process per query",
    3: "3 our CLI process per query",
    4: "4 bare Playwright floor",
    5: "5 stdlib client via service",
    6: "6 our CLI via service",
    7: "7 our CLI's start-up alone",
    8: "8 control: row 1's twin",
}
STARTUP_ROW = 7
TARGET_OVERHEAD = 1.10
TARGET_SPEEDUP_LIGHT = 5.0
TARGET_CLIENT_OVERHEAD = 1.15
TARGET_SPEEDUP_CLI = 3.0


# -- the rows -----------------------------------------------------------------------------------


class CallFailed(Exception):
    """A row's call did not produce the expected answer."""


class WarmRow:
    """Row 1: `BrowseTool` in this process, one attached driver, its owned tab reused.

    Row 8 is its twin (`state`: its own state folder, so its own tab): the same call measured
    twice in one run, whose ratio is the spread the machine alone gives two identical rows."""

    def __init__(self, stage: Stage, key: int = 1, state: str | None = None) -> None:
        from search import BrowseTool, ToolContext

        settings = stage.settings
        if state is not None:
            settings = settings.model_copy(update={"state_dir": str(stage.tmp / state)})
        self.key = key
        self.tool = BrowseTool(settings)
        self.ctx = ToolContext(broadcasting=True)

    def run(self, work: Workload) -> None:
        # `run_sync` is `call` (the same routed walk on the same loop thread) plus the chain.
        if work.action == "search":
            walk = self.tool.run_sync(work.target, action="search", ctx=self.ctx)
            want = "google"
        else:
            walk = self.tool.run_sync(work.target, action="read", url=work.target, ctx=self.ctx)
            want = "read"
        result = walk.result
        if result is None or not result.success or result.provider != want:
            raise CallFailed(
                f"provider={result.provider if result else None} chain="
                + ", ".join(f"{h.provider}:{h.failure_kind}:{h.detail}" for h in walk.chain)
            )

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.tool.loop.run(self.tool.driver.close_owned_tab(), 10)
        self.tool.close()


def _child_env(stage: Stage) -> dict[str, str]:
    return stage.child_env("state-cli", "no-gemini-in-the-bench")


class ProcessRow:
    """Rows 2 and 3: a process per query (the Node script, or our own CLI)."""

    def __init__(self, key: int, stage: Stage, argv: Callable[[Workload], list[str]]) -> None:
        self.key = key
        self.argv = argv
        self.env = _child_env(stage)

    def run(self, work: Workload) -> None:
        proc = subprocess.run(
            self.argv(work),
            capture_output=True,
            text=True,
            env=self.env,
            cwd=ROOT,
            timeout=60,
            check=False,
        )
        if proc.returncode != 0:
            raise CallFailed(f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
        json.loads(proc.stdout.strip().splitlines()[-1])

    def close(self) -> None:
        pass


def node_row(stage: Stage) -> ProcessRow:
    node = shutil.which("node") or "node"

    def argv(work: Workload) -> list[str]:
        return [node, str(NODE_SCRIPT), "--cdp", stage.endpoint, work.action, work.target]

    return ProcessRow(2, stage, argv)


def cli_row(stage: Stage) -> ProcessRow:
    def argv(work: Workload) -> list[str]:
        return [
            str(SB_CLI),
            "--env-file",
            str(stage.tmp / "no.env"),
            work.action,
            work.target,
            "--json",
        ]

    return ProcessRow(3, stage, argv)


class BenchService:
    """`stream-browser serve` as its own process on this stage (ephemeral port, no cache),
    one for row 5 and one for row 6, each with its own tab as row 1 has (sharing one, a call
    of either row waited for the other's show after its answer, up to half a second, whenever
    the shuffle put them side by side), stopped (SIGTERM: drained) when its row closes."""

    def __init__(self, stage: Stage, *, state: str, console: bool = False) -> None:
        env = _child_env(stage)
        env.update(
            {
                "SB_SERVICE_PORT": "0",
                "SB_STATE_DIR": str(stage.tmp / state),
                "SB_CACHE_TTL_S": "0",
                "SB_SERVICE_TOKEN": os.urandom(24).hex(),
            }
        )
        self.token = env["SB_SERVICE_TOKEN"]
        self.proc = subprocess.Popen(
            [str(SB_CLI), "--env-file", str(stage.tmp / "no.env"), "serve"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # "stream-browser: serving on URL"
        if "serving on " not in line:
            self.proc.kill()
            self.proc.communicate(timeout=5)  # reaped, its pipe closed
            raise RuntimeError(f"the service did not start: {line!r}")
        self.url = line.rsplit(" ", 1)[1].strip()
        self.users = 0
        # --console: a person's console tab open on this service for the whole run
        self.console = ConsoleTab(self.url, self.token).start() if console else None

    def client_env(self, stage: Stage) -> dict[str, str]:
        return {**_child_env(stage), "SB_SERVICE_URL": self.url, "SB_SERVICE_TOKEN": self.token}

    def release(self) -> None:
        self.users -= 1
        if self.users <= 0 and self.console is not None:
            counts, self.console = self.console.stop(), None
            print(
                f"console tab: {counts.states} state polls, {counts.frames} frames, "
                f"{counts.details} call details, {len(counts.errors)} errors "
                f"{counts.errors[:3]}",
                flush=True,
            )
        if self.users <= 0 and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
            if self.proc.stdout is not None:
                self.proc.stdout.close()


class ClientRow:
    """Row 5: the standard-library client (`search.client`) through the service."""

    key = 5

    def __init__(self, service: BenchService) -> None:
        from search import client

        self.client = client
        self.service = service
        service.users += 1

    def run(self, work: Workload) -> None:
        url = work.target if work.action == "read" else None
        answer = self.client.browse(
            work.target,
            action=work.action,
            url=url,
            broadcasting=True,
            service_url=self.service.url,
            token=self.service.token,
        )
        result = (answer or {}).get("result") or {}
        want = "google" if work.action == "search" else "read"
        if not result.get("success") or result.get("provider") != want:
            chain = (answer or {}).get("chain", [])
            raise CallFailed(
                f"provider={result.get('provider')} chain="
                + ", ".join(f"{h.get('provider')}:{h.get('failure_kind')}" for h in chain)
            )

    def close(self) -> None:
        self.service.release()


def service_cli_row(stage: Stage, service: BenchService) -> ProcessRow:
    """Row 6: our CLI, a process per query, as a client of the service."""
    row = cli_row(stage)
    row.key = 6
    row.env = service.client_env(stage)
    service.users += 1
    row.close = service.release  # type: ignore[method-assign]
    return row


# -- measuring ----------------------------------------------------------------------------------


@dataclass
class Series:
    """The timings of one row on one workload, and its failures."""

    row: int
    workload: str
    ms: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.ms) if self.ms else math.nan

    @property
    def p95(self) -> float:
        if not self.ms:
            return math.nan
        ordered = sorted(self.ms)
        return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


@dataclass
class Results:
    series: dict[tuple[int, str], Series] = field(default_factory=dict)
    viewer_dcl_ms: list[float] = field(default_factory=list)
    skipped: dict[int, str] = field(default_factory=dict)

    def get(self, row: int, workload: str) -> Series:
        key = (row, workload)
        if key not in self.series:
            self.series[key] = Series(row, workload)
        return self.series[key]


def timed_call(row: Any, work: Workload, series: Series | None) -> None:
    started = time.perf_counter()
    try:
        row.run(work)
    except Exception as exc:  # every failure is reported; none stops the bench
        if series is not None:
            series.failures.append(f"{type(exc).__name__}: {str(exc)[:300]}")
        return
    if series is not None:
        series.ms.append((time.perf_counter() - started) * 1000)


def measure(
    rows: list[Any],
    floor: FloorRow,
    bench: Bench,
    rounds: int,
    warmup: int,
    results: Results,
    seed: int = 7,
) -> None:
    """Interleave: every round, every workload, every row in a shuffled order."""
    shuffle = random.Random(seed)
    for round_no in range(warmup + rounds):
        recording = round_no >= warmup
        for work in bench.workloads + bench.extra:
            order = [row for row in rows if work.rows is None or row.key in work.rows]
            shuffle.shuffle(order)
            for row in order:
                series = results.get(row.key, work.name) if recording else None
                timed_call(row, work, series)
                if recording and row.key == 1 and work.name == "heavy":
                    dcl = floor.viewer_dcl_ms("https://www.google.com/search")
                    if dcl is not None:
                        results.viewer_dcl_ms.append(dcl)
                floor.quiesce()
        done = round_no + 1 - warmup
        if recording and (done % 5 == 0 or done == rounds):
            print(f"  round {done}/{rounds}", file=sys.stderr, flush=True)


# -- side measurements -------------------------------------------------------------------------


def serving_cost(bench: Bench, repeat: int = 5) -> list[str]:
    """What serving costs: the server's own time per request, and a raw HTTPS fetch."""
    insecure = ssl.create_default_context()
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE
    lines, server = [], bench.stage.server
    for work in bench.workloads:
        path = "/search" if work.action == "search" else work.target.removeprefix(server.origin)
        count, median_ms, max_ms = server.serving_ms(path)
        fetch = []
        for _ in range(repeat):
            started = time.perf_counter()
            with urllib.request.urlopen(
                server.origin + path, context=insecure, timeout=10
            ) as response:
                response.read()
            fetch.append((time.perf_counter() - started) * 1000)
        lines.append(
            f"  {work.name:<6} {work.size / 1e6:5.2f} MB: server {median_ms:6.1f} ms "
            f"median ({count} requests, max {max_ms:.1f}), fresh-connection HTTPS "
            f"fetch {statistics.median(fetch):6.1f} ms"
        )
    return lines


def extraction_times(fixtures: list[Path], top: int, repeat: int) -> list[str]:
    """`extract_article` on the largest article pages: median ms per page."""
    try:
        from search.parsers.article import extract_article
    except ImportError as exc:
        return [f"  skipped: search.parsers.article is not importable ({exc})"]
    lines = []
    for size, path in article_files(fixtures)[-top:][::-1]:
        html = read_page(path).decode("utf-8", errors="replace")
        times, words = [], 0
        for _ in range(repeat):
            started = time.perf_counter()
            article = extract_article(html, "https://example.com/" + path.name)
            times.append((time.perf_counter() - started) * 1000)
            words = len(article.text.split())
        lines.append(
            f"  {size / 1e6:5.2f} MB {statistics.median(times):7.1f} ms median "
            f"(max {max(times):6.1f}, {words} words)  {path.name[:60]}"
        )
    return lines or ["  skipped: no article pages found"]


def gemini_overhead(tmp: Path, repeat: int) -> list[str]:
    """`gemini.ask_cli` against a bare subprocess of the same fake `gemini` binary."""
    from gemini import ask_cli
    from gemini.testing import write_fake_gemini

    fake = write_fake_gemini(tmp / "fake-gemini", "success")
    argv = [str(fake), "-p", QUERY, "-o", "json", "--skip-trust"]
    bare = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True, timeout=30)
        bare.append((time.perf_counter() - started) * 1000)
    settings = build_settings(gemini_cli=str(fake), gemini_timeout_s=30)

    async def wrapped() -> list[float]:
        out = []
        for _ in range(repeat):
            started = time.perf_counter()
            await ask_cli(QUERY, settings)
            out.append((time.perf_counter() - started) * 1000)
        return out

    # The sync Playwright of row 4 owns this thread's event loop: run on a fresh thread.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        wrapper = pool.submit(asyncio.run, wrapped()).result()
    delta = statistics.median(wrapper) - statistics.median(bare)
    return [
        f"  bare subprocess {statistics.median(bare):6.1f} ms, ask_cli "
        f"{statistics.median(wrapper):6.1f} ms (median of {repeat}); wrapper overhead "
        f"{delta:+.1f} ms"
    ]


# -- report -------------------------------------------------------------------------------------


def ratio(a: float, b: float) -> float:
    return a / b if b and not math.isnan(a) and not math.isnan(b) else math.nan


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def report(results: Results, bench: Bench) -> dict[str, float]:
    """Print the table and the ratios; return the ratios."""
    print(f"\n{'workload':<8} {'row':<31} {'n':>3} {'median ms':>10} {'p95 ms':>9} {'fail':>5}")
    for work in bench.workloads + bench.extra:
        for key, label in ROW_LABELS.items():
            if key == STARTUP_ROW or (work.rows is not None and key not in work.rows):
                continue
            if key in results.skipped:
                print(f"{work.name:<8} {label:<31}   - skipped: {results.skipped[key]}")
                continue
            s = results.get(key, work.name)
            print(
                f"{work.name:<8} {label:<31} {len(s.ms):>3} {s.median:>10.0f} {s.p95:>9.0f} "
                f"{len(s.failures):>5}"
            )
    report_startup(results)
    med = {k: s.median for k, s in results.series.items()}
    ratios = {
        "speedup-heavy": ratio(med.get((2, "heavy"), math.nan), med.get((1, "heavy"), math.nan)),
        "speedup-light": ratio(med.get((2, "light"), math.nan), med.get((1, "light"), math.nan)),
        "overhead-heavy": ratio(med.get((1, "heavy"), math.nan), med.get((4, "heavy"), math.nan)),
        "overhead-light": ratio(med.get((1, "light"), math.nan), med.get((4, "light"), math.nan)),
        "overhead-heavy26": ratio(
            med.get((1, "heavy26"), math.nan), med.get((4, "heavy26"), math.nan)
        ),
        "client-overhead-heavy": ratio(
            med.get((5, "heavy"), math.nan), med.get((1, "heavy"), math.nan)
        ),
        "client-overhead-light": ratio(
            med.get((5, "light"), math.nan), med.get((1, "light"), math.nan)
        ),
        "speedup-cli-heavy": ratio(
            med.get((2, "heavy"), math.nan), med.get((6, "heavy"), math.nan)
        ),
        "speedup-cli-light": ratio(
            med.get((2, "light"), math.nan), med.get((6, "light"), math.nan)
        ),
        "control-heavy": ratio(med.get((8, "heavy"), math.nan), med.get((1, "heavy"), math.nan)),
        "control-light": ratio(med.get((8, "light"), math.nan), med.get((1, "light"), math.nan)),
        "cli-startup": ratio(
            med.get((STARTUP_ROW, "remote"), math.nan), med.get((STARTUP_ROW, "client"), math.nan)
        ),
    }
    print()
    print(
        f"speedup-heavy  {ratios['speedup-heavy']:.2f}  (row 2 / row 1 median; target > 1: "
        f"{_verdict(ratios['speedup-heavy'] > 1)})"
    )
    light_ok = ratios["speedup-light"] >= TARGET_SPEEDUP_LIGHT
    print(
        f"speedup-light  {ratios['speedup-light']:.2f}  (row 2 / row 1 median; target >= "
        f"{TARGET_SPEEDUP_LIGHT:.0f}: {_verdict(light_ok)})"
    )
    for name in ("overhead-heavy", "overhead-light"):
        print(
            f"{name} {ratios[name]:.2f}  (row 1 / row 4 median; target <= {TARGET_OVERHEAD}: "
            f"{_verdict(ratios[name] <= TARGET_OVERHEAD)})"
        )
    print(
        f"overhead-heavy26 {ratios['overhead-heavy26']:.2f}  (row 1 / row 4 median on the "
        f"2026-shaped page; target <= overhead-heavy {ratios['overhead-heavy']:.2f}: "
        f"{_verdict(ratios['overhead-heavy26'] <= ratios['overhead-heavy'])})"
    )
    report_service(ratios, results)
    if results.viewer_dcl_ms:
        print(
            f"row 1 heavy: answer at {med.get((1, 'heavy'), math.nan):.0f} ms; the viewers' "
            f"page reached DOMContentLoaded at {statistics.median(results.viewer_dcl_ms):.0f} "
            "ms after its navigation started (median, navigation timing)"
        )
    for (key, name), s in sorted(results.series.items()):
        for failure in s.failures[:5]:
            print(f"failure row {key} {name}: {failure}")
    return ratios


def report_startup(results: Results) -> None:
    """Row 7's lines under the table: the CLI up to its request, then its controls."""
    if STARTUP_ROW in results.skipped:
        print(
            f"{'start':<8} {ROW_LABELS[STARTUP_ROW]:<31}   - skipped: "
            f"{results.skipped[STARTUP_ROW]}"
        )
        return
    for name, label in STARTUP_LABELS.items():
        s = results.get(STARTUP_ROW, name)
        print(
            f"{'start':<8} {label:<31} {len(s.ms):>3} {s.median:>10.0f} {s.p95:>9.0f} "
            f"{len(s.failures):>5}"
        )


def report_service(ratios: dict[str, float], results: Results) -> None:
    for name in ("client-overhead-heavy", "client-overhead-light"):
        spread = _interval(results, 5, name.rsplit("-", 1)[1])
        print(
            f"{name} {ratios[name]:.2f}  (row 5 / row 1 median{spread}; target <= "
            f"{TARGET_CLIENT_OVERHEAD}: {_verdict(ratios[name] <= TARGET_CLIENT_OVERHEAD)})"
        )
    for name in ("control-heavy", "control-light"):
        if not math.isnan(ratios[name]):
            spread = _interval(results, 8, name.rsplit("-", 1)[1])
            print(
                f"{name} {ratios[name]:.2f}  (row 8 / row 1 median{spread}: the same call "
                "twice, the spread of this run alone)"
            )
    for name in ("speedup-cli-heavy", "speedup-cli-light"):
        print(
            f"{name} {ratios[name]:.2f}  (row 2 / row 6 median; target >= "
            f"{TARGET_SPEEDUP_CLI:.0f}: {_verdict(ratios[name] >= TARGET_SPEEDUP_CLI)})"
        )
    print(
        f"cli-startup {ratios['cli-startup']:.2f}  (row 7: the CLI's remote path up to its "
        "request / python importing search.client, medians; 1.00 is a stdlib script's start)"
    )


def _interval(results: Results, row: int, workload: str) -> str:
    """`, 90% interval L-H`: the ratio of `row` over row 1 bootstrapped from this run's rounds
    (the run-to-run spread a single figure hides), or nothing when too few rounds."""
    a, b = results.get(row, workload).ms, results.get(1, workload).ms
    if min(len(a), len(b)) < 5:
        return ""
    if len(a) == len(b):  # the rounds' pairs, which shared the machine's state
        low, high = ratio_interval(a, b)
    else:
        n = min(len(a), len(b))
        low, high = ratio_interval(a[:n], b[:n])
    return f", 90% interval {low:.2f}-{high:.2f}"


# -- main ---------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench.py", description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=30, help="timed rounds (default 30)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first (default 1)")
    parser.add_argument("--smoke", action="store_true", help="a few rounds, seconds: for tests")
    parser.add_argument(
        "--fixtures",
        type=Path,
        action="append",
        help="folder of saved pages (default tests/fixtures, then ../shared)",
    )
    parser.add_argument("--heavy", type=Path, help="the heavy Google results page")
    parser.add_argument("--light", type=Path, help="the light article page")
    parser.add_argument(
        "--rows",
        default="1,2,3,4,5,6,7",
        help="rows to run (default 1-7; row 8, the control, on request: its driver adds a "
        "Fetch guard that every row's navigations pass through)",
    )
    parser.add_argument("--headful", action="store_true", help="a visible Chromium (Xvfb)")
    parser.add_argument(
        "--egress-arms",
        type=parse_arms,
        default=DEFAULT_ARMS,
        help=f"the egress comparison's arms, among {','.join(ARMS)} (default "
        f"{','.join(DEFAULT_ARMS)}; see bench/egress/_arms.py)",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write results as JSON")
    parser.add_argument("--log-level", default="warning", help="the tool's log level (warning)")
    parser.add_argument(
        "--console",
        action="store_true",
        help="rows 5 and 6 with a console tab open on the service (polling, as a person's)",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.iterations, args.warmup = 1, 0
    return args


def node_skip_reason() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    if not (BENCH / "node_modules" / "playwright-core").is_dir():
        return "bench/node_modules is missing: run `cd bench && npm install` (make bench does)"
    return None


def build_rows(
    stage: Stage, wanted: set[int], results: Results, *, console: bool = False
) -> list[Any]:
    rows: list[Any] = []
    if 1 in wanted:
        rows.append(WarmRow(stage))
    if 8 in wanted:
        rows.append(WarmRow(stage, key=8, state="state-twin"))
    reason = node_skip_reason()
    if 2 in wanted and reason:
        results.skipped[2] = reason
    elif 2 in wanted:
        rows.append(node_row(stage))
    if 3 in wanted and not SB_CLI.exists():
        results.skipped[3] = f"{SB_CLI} not found: run `make venv`"
    elif 3 in wanted:
        rows.append(cli_row(stage))
    if wanted & {5, 6}:
        rows += service_rows(stage, wanted, results, console=console)
    for key in set(ROW_LABELS) - wanted:
        results.skipped.setdefault(key, "not selected (--rows)")
    return rows


def service_rows(
    stage: Stage, wanted: set[int], results: Results, *, console: bool = False
) -> list[Any]:
    if not SB_CLI.exists():
        for key in wanted & {5, 6}:
            results.skipped[key] = f"{SB_CLI} not found: run `make venv`"
        return []
    rows: list[Any] = []
    if 5 in wanted:
        rows.append(ClientRow(BenchService(stage, state="state-service-5", console=console)))
    if 6 in wanted:
        service = BenchService(stage, state="state-service-6", console=console)
        rows.append(service_cli_row(stage, service))
    return rows


def prime(rows: list[Any], bench: Bench) -> None:
    """Rows 1, 4, 5 and 8 are warm by definition: connect and load each page once, untimed."""
    for row in rows:
        if row.key in (1, 4, 5, 8):
            for work in bench.workloads + bench.extra:
                if work.rows is None or row.key in work.rows:
                    timed_call(row, work, None)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    configure_logging(args.log_level, "console")
    fixtures = default_sets(args.fixtures)
    heavy, light = find_heavy(fixtures, args.heavy), find_light(fixtures, args.light)
    wanted = {int(x) for x in args.rows.split(",") if x.strip()}
    bench = open_bench(heavy, light, headful=args.headful)
    stage = bench.stage
    results = Results()
    rows: list[Any] = []
    floor: FloorRow | None = None
    try:
        print(f"heavy: {heavy} ({bench.workloads[0].size / 1e6:.2f} MB)")
        print(f"light: {light} ({bench.workloads[1].size / 1e3:.0f} kB)")
        for work in bench.extra:
            print(f"{work.name}: {work.page} ({work.size / 1e6:.2f} MB), rows 1 and 4")
        print(
            f"chromium pid {stage.chrome.pid} at {stage.endpoint}, "
            f"{'headful' if args.headful else 'headless'}; {args.iterations} rounds "
            f"(+{args.warmup} warm-up), rows interleaved in shuffled order",
            flush=True,
        )
        rows = build_rows(stage, wanted, results, console=args.console)
        floor = FloorRow(stage)
        if 4 in wanted:
            rows.append(floor)
        prime(rows, bench)
        stage.server.clear_hits()
        measure(rows, floor, bench, args.iterations, args.warmup, results)
        if STARTUP_ROW in wanted:
            startup_row(stage, results, 3 if args.smoke else args.iterations)
        ratios = report(results, bench)
        side_measurements(args, bench, fixtures)
        print("\nwhere the warm path's time goes (row 1, layer by layer, beside the floor):")
        rounds, gap_s = (2, 0.0) if args.smoke else (10, 3.0)
        print("\n".join(layer_breakdown(bench, floor, rounds, gap_s)))
        print("\negress guard: goto + content, the same pages in each arm's Chromium:")
        rounds = 3 if args.smoke else 30
        print("\n".join(egress_cost(floor, bench, rounds, arms=args.egress_arms)))
        if args.json:
            write_json(args.json, results, ratios, bench)
    finally:
        for row in rows:
            if row is not floor:
                row.close()
        if floor is not None:
            floor.close()
        stage.close()
    return 0


def startup_row(stage: Stage, results: Results, rounds: int) -> None:
    """Row 7 (after the others, so no call runs beside it): fresh processes, interleaved."""
    if not SB_CLI.exists():
        results.skipped[STARTUP_ROW] = f"{SB_CLI} not found: run `make venv`"
        return
    python = SB_CLI.parent / "python"
    times, failures = measure_startup(python, SB_CLI, _child_env(stage), stage.tmp, rounds)
    for name in STARTUP_LABELS:
        series = results.get(STARTUP_ROW, name)
        series.ms, series.failures = times[name], failures[name]


def side_measurements(args: argparse.Namespace, bench: Bench, fixtures: list[Path]) -> None:
    print("\nserving cost (same server for every row):")
    print("\n".join(serving_cost(bench)))
    print("\npage-read extraction (search.parsers.article.extract_article), largest pages:")
    print("\n".join(extraction_times(fixtures, 2 if args.smoke else 5, 1 if args.smoke else 5)))
    print("\nGemini CLI wrapper over a bare subprocess (fake binary):")
    print("\n".join(gemini_overhead(bench.stage.tmp, 3 if args.smoke else 15)))
    print("\nthe stage (what viewers see), added time per action:")
    article = bench.workloads[1].target
    print("\n".join(stage_cost(bench.stage, QUERY, article, 1 if args.smoke else 10)))
    print("\nburst: 10 reads queued at once on the one tab, against the same reads one by one:")
    light = read_page(bench.workloads[1].page)
    count, rounds = (3, 1) if args.smoke else (10, 5)
    print("\n".join(burst_cost(bench.stage, light, count, rounds)))


def write_json(path: Path, results: Results, ratios: dict[str, float], bench: Bench) -> None:
    payload = {
        "workloads": [
            {"name": w.name, "page": str(w.page), "bytes": w.size} for w in bench.workloads
        ],
        "series": [
            {**asdict(s), "median": s.median, "p95": s.p95} for s in results.series.values()
        ],
        "ratios": ratios,
        "skipped": results.skipped,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
