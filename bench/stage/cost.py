"""What the stage (browser_core/stage: the passage highlighted, the result marked, the player
in theater mode, the caption) adds to each action's answer, measured two ways on the bench's
own Chromium and pages:

- `waited`: the time the answer itself waited on the stage (its `stage.shown` events; steps
  run side by side count once, the longest), which the design caps at 100 ms; the stage
  now runs after the answer, so this is the search's mark before it opens a result, or 0;
- `held`: how long the tab stayed busy with the stage after the answer was handed back
  (what a next call would wait for at most, capped at `STAGE_HOLD_S`);
- `with - without`: the action's median with the stage against the same action with the
  stage's calls replaced by no-ops, interleaved (this also counts the background work the
  stage starts, which shares the two cores with the action).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import random
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from structlog.testing import capture_logs

from bench._common.serve import add_youtube
from bench._common.stage import Stage
from browser_core import Driver, Settings

ACTIONS = ("search", "read", "play", "stop")
# The stage's entry points as the providers import them: replaced by no-ops for `without`.
_SEAMS = {
    "search.providers.read": ("show_passage", "show_caption", "prepare"),
    "search.providers.google": ("show_result", "show_caption", "prepare"),
    "search.providers.youtube": ("_show_playing",),
}


async def _nothing(*args: Any, **kwargs: Any) -> None:
    return None


def _nothing_now(*args: Any, **kwargs: Any) -> None:
    return None


@contextlib.contextmanager
def stage_off() -> Iterator[None]:
    """The providers with the stage's calls replaced by no-ops (the `without` arm)."""
    import importlib

    saved = []
    for module_name, names in _SEAMS.items():
        module = importlib.import_module(module_name)
        for name in names:
            saved.append((module, name, getattr(module, name)))
            setattr(module, name, _nothing_now if name == "prepare" else _nothing)
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


def _calls(
    driver: Driver, settings: Settings, query: str, article: str
) -> dict[str, Callable[[], Awaitable[Any]]]:
    from search.providers.google import google_search
    from search.providers.read import read_page
    from search.providers.youtube import control, play

    return {
        "search": lambda: google_search(driver, query, settings),
        "read": lambda: read_page(driver, article, settings),
        "play": lambda: play(driver, "test pattern", settings),
        "stop": lambda: control(driver, "stop", settings),
    }


def _waited(logs: list[Any]) -> float:
    """The answer's wait on the stage: side-by-side steps (one gather) count once."""
    waits = [float(e["waited_ms"]) for e in logs if e.get("event") == "stage.shown"]
    return max(waits, default=0.0)


async def _run(
    stage: Stage, query: str, article: str, rounds: int
) -> dict[tuple[str, str], list[float]]:
    settings = stage.settings.model_copy(update={"caption": True})  # every step, at its cost
    driver = Driver(settings)
    calls = _calls(driver, settings, query, article)
    out: dict[tuple[str, str], list[float]] = {}
    try:
        for action in ACTIONS:  # warm: connect, first loads
            await calls[action]()
        for _ in range(rounds):
            order = [(a, arm) for a in ACTIONS for arm in ("with", "without")]
            random.shuffle(order)
            for action, arm in order:
                await _one(driver, calls, action, arm, out)
    finally:
        await driver.close()
    return out


async def _one(
    driver: Driver,
    calls: dict[str, Callable[[], Awaitable[Any]]],
    action: str,
    arm: str,
    out: dict[tuple[str, str], list[float]],
) -> None:
    if action == "stop":  # stop needs a video on the tab first, untimed
        await calls["play"]()
        await driver.stage_done()
    switch = stage_off() if arm == "without" else contextlib.nullcontext()
    with switch, capture_logs() as logs:
        started = time.perf_counter()
        await calls[action]()
        elapsed = (time.perf_counter() - started) * 1000
        await driver.stage_done()
        held = (time.perf_counter() - started) * 1000 - elapsed
    out.setdefault((action, arm), []).append(elapsed)
    if arm == "with":
        out.setdefault((action, "waited"), []).append(_waited(logs))
        out.setdefault((action, "held"), []).append(held)
    await asyncio.sleep(0.2)  # what the stage still does in the background settles


def stage_cost(stage: Stage, query: str, article: str, rounds: int) -> list[str]:
    """Lines for the bench report: per action, the stage's added time."""
    add_youtube(stage.server)
    # A thread of its own: the bench's sync Playwright rows keep a loop in the main thread.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        series = pool.submit(asyncio.run, _run(stage, query, article, rounds)).result()
    lines = [
        f"  {'action':<7} {'waited median':>14} {'p95':>6} {'max':>6}"
        f" {'with - without (medians)':>26} {'held after (median)':>20}"
    ]
    for action in ACTIONS:
        waited = sorted(series.get((action, "waited"), [0.0]))
        with_ms = statistics.median(series[(action, "with")])
        without_ms = statistics.median(series[(action, "without")])
        p95 = waited[min(len(waited) - 1, round(0.95 * (len(waited) - 1)))]
        held = statistics.median(series.get((action, "held"), [0.0]))
        lines.append(
            f"  {action:<7} {statistics.median(waited):>11.1f} ms {p95:>6.1f} {waited[-1]:>6.1f}"
            f" {with_ms - without_ms:>+14.1f} ms ({with_ms:.0f} vs {without_ms:.0f})"
            f" {held:>14.1f} ms"
        )
    load = os.getloadavg()[0]
    lines.append(
        f"  ({rounds} rounds, interleaved; the stage's budget per action is 100 ms; caption on,"
        f" so every step runs; load average {load:.1f} on {os.cpu_count()} cores: the"
        " with - without column is only meaningful on an idle machine)"
    )
    return lines
