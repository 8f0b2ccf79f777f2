"""What the egress guard costs: goto + content of the same pages in the bench's Chromium
(behind the guard) and in a second Chromium without it, calls interleaved, medians and ratio."""

from __future__ import annotations

import contextlib
import statistics
import time
from typing import Any

from browser_core import launch_chrome, stop_pid
from browser_core.testing import free_port


def _timed(page: Any, url: str) -> float:
    started = time.perf_counter()
    page.goto(url, wait_until="domcontentloaded")
    page.content()
    return (time.perf_counter() - started) * 1000


def egress_cost(floor: Any, bench: Any, rounds: int, warmup: int = 2) -> list[str]:
    """Lines for the report. `floor` is the bench's bare-Playwright row (its tab is behind the
    guard); the comparison tab lives in a Chromium started without the guard."""
    stage = bench.stage
    chrome = launch_chrome(
        port=free_port(),
        user_data_dir=str(stage.tmp / "profile-unguarded"),
        headless=stage.chrome.headless,
        egress=False,
        extra_args=stage.server.chrome_args(),
    )
    browser = None
    lines = []
    try:
        browser = floor._pw.chromium.connect_over_cdp(chrome.endpoint)
        bare = browser.contexts[0].new_page()
        for work in bench.workloads:
            url = floor.url(work)
            guarded_ms: list[float] = []
            bare_ms: list[float] = []
            for i in range(warmup + rounds):
                pair = [(floor.page, guarded_ms), (bare, bare_ms)]
                for page, series in pair if i % 2 else reversed(pair):
                    ms = _timed(page, url)
                    if i >= warmup:
                        series.append(ms)
            guarded, unguarded = statistics.median(guarded_ms), statistics.median(bare_ms)
            lines.append(
                f"  {work.name:<6} behind the guard {guarded:7.0f} ms, without "
                f"{unguarded:7.0f} ms (medians of {rounds}); ratio "
                f"{guarded / unguarded:.2f}"
            )
    finally:
        if browser is not None:
            with contextlib.suppress(Exception):
                browser.close()
        stop_pid(chrome.pid)
    return lines
