"""`make bench` in miniature, so the benchmark cannot rot: it must print its table and its
ratios as numbers. No timing is asserted here; the real numbers are in docs/performance.md."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NODE_READY = (ROOT / "bench" / "node_modules" / "playwright-core").is_dir()


def _ratio(output: str, name: str) -> float:
    match = re.search(rf"^{name}\s+(\S+)", output, re.M)
    assert match, f"{name} missing from the bench output"
    return float(match.group(1))


@pytest.mark.slow
def test_the_bench_smoke_run_prints_the_table_and_the_ratios() -> None:
    rows = "1,2,3,4,5,6,7,8" if NODE_READY else "1,3,4,5,6,7,8"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.warm", "--smoke", "--rows", rows],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=280,  # 80 s alone; beside the other worker of `make test`, up to twice that
        check=False,
    )
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert re.search(r"^workload\s+row\s+n\s+median ms\s+p95 ms\s+fail$", out, re.M)
    for row in (
        "1 warm in-process",
        "3 our CLI process",
        "4 bare Playwright floor",
        "5 stdlib client via service",
        "6 our CLI via service",
        "8 control: row 1's twin",
    ):
        assert re.search(rf"^heavy\s+{row}.*\s0$", out, re.M), f"{row} failed:\n{out}"
    # row 7: the CLI's start-up alone (no call) and its controls, each run without a failure
    for row in (
        "7 CLI via service, to request",
        "stream-browser --version",
        "python: import search.client",
        "python -c pass",
    ):
        assert re.search(rf"^start\s+{row}\s+3\s.*\s0$", out, re.M), f"{row} failed:\n{out}"
    for name in (
        "overhead-heavy",
        "overhead-light",
        "client-overhead-heavy",
        "control-light",
        "cli-startup",
    ):
        assert math.isfinite(_ratio(out, name))
    assert "serving cost" in out and "extraction" in out and "wrapper overhead" in out
    # The egress guard's cost, beside where its time goes, with the load it was measured at,
    # between Chromiums launched alike but for the proxy switch (checked on their command lines).
    assert re.search(r"^  guard +against bare: added --proxy-server=socks5://", out, re.M), out
    assert re.search(r"^  control +against bare: the same$", out, re.M), out
    assert "UNFAIR" not in out
    ratio = r"ratio \d+\.\d\d, 90% interval \d+\.\d\d-\d+\.\d\d \(target"
    assert re.search(rf"^  heavy\s+behind the guard .* {ratio}", out, re.M), out
    for step in (
        "load average",
        "phases",
        "control, a second Chromium without the guard",
        "DCL to goto's return",
        "SOCKS: accept",
        "relay heavy",
        "name resolution",
    ):
        assert step in out, f"{step} missing from the egress breakdown"
    if not NODE_READY:
        pytest.skip(
            "row 2 (Node baseline) not run: bench/node_modules is missing; "
            "`cd bench && npm install` (make bench does it)"
        )
    for name in ("speedup-heavy", "speedup-light", "speedup-cli-heavy", "speedup-cli-light"):
        assert math.isfinite(_ratio(out, name))
