"""Where the warm path's time goes (issue 36): row 1's two calls (a Google search on the heavy
page, a read of the light article) taken apart layer by layer, beside the bare-Playwright
floor (`goto` + `content()`) measured in the same rounds.

Each layer is timed where the code calls it, by wrapping the function the callers look up at
call time (a bench-only seam, undone afterwards): the turn (locking), the owned tab made ready
(its responsiveness check and `bring_to_front`), the navigation policy, Chromium's `goto` up to
the response's start, the settle, the response body handed over by Playwright, the parse
(Google's results page, or the article's extraction on a worker thread), the passage selection,
where the page went after the response, the stage's work inside the call (its world and
stylesheet, `prepare`), and the envelope.
"The rest" is the call's time less every layer: routing, the provider, thread and loop hops.
"response body" is Playwright's `response.text()` after the response started: the body's
transfer and Chromium's hand-over, which the floor spends inside its `goto`.
The stage's work after the answer is not in the call (`the stage` section reports it); each
call here waits for it to finish before the next starts, so no layer waits on it.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

from bench._common.workloads import Bench, FloorRow, Workload

# (label, module, attribute path): each wrapped where its callers look it up.
LAYERS: tuple[tuple[str, str, str], ...] = (
    ("locking (the turn)", "browser_core", "Driver._take_turn"),
    ("owned tab ready", "browser_core", "Driver._owned_page"),
    ("policy", "browser_core.driver._navigation", "Navigation.check"),
    ("goto to the response", "playwright.async_api", "Page.goto"),
    ("settle", "browser_core.driver._navigation", "Navigation.settle"),
    ("response body", "search.providers.google", "_body_html"),
    ("response body", "search.providers.read", "_response_html"),
    ("parse", "search.providers.google", "_parse"),
    ("parse", "search.parsers.article", "extract_article"),
    ("passages", "search.providers.read", "select"),
    ("where the page went", "search.providers.read", "_followed"),
    ("stage inside the call", "search.providers.google", "prepare"),
    ("stage inside the call", "search.providers.read", "prepare"),
    ("envelope", "search._tool", "wrap_answer"),
)
ORDER = tuple(dict.fromkeys(label for label, _, _ in LAYERS))
# Calls as far apart as row 1's in the main rounds: a read's stage keeps watching the page for
# late covers for 3 s after the answer (not holding the tab, but sharing the two cores).
GAP_S = 3.0
REST = "the rest (routing, provider, hops)"


class Clock:
    """Time spent in each layer during one call (a layer's own time: what it calls of the
    other layers is not counted twice)."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)
        self._open: list[list[float]] = []  # per open layer: time taken by layers inside it

    def timed(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        clock = self

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                started, inner = clock._enter()
                try:
                    return await fn(*args, **kwargs)
                finally:
                    clock._leave(label, started, inner)

            return run_async

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            started, inner = clock._enter()
            try:
                return fn(*args, **kwargs)
            finally:
                clock._leave(label, started, inner)

        return run

    def _enter(self) -> tuple[float, list[float]]:
        inner = [0.0]
        self._open.append(inner)
        return time.perf_counter(), inner

    def _leave(self, label: str, started: float, inner: list[float]) -> None:
        took = time.perf_counter() - started
        with contextlib.suppress(ValueError):
            self._open.remove(inner)
        self.spent[label] += took - inner[0]
        if self._open:
            self._open[-1][0] += took


@contextlib.contextmanager
def wrapped(clock: Clock) -> Iterator[None]:
    saved = []
    for label, module_name, path in LAYERS:
        owner: Any = importlib.import_module(module_name)
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        saved.append((owner, name, original))
        setattr(owner, name, clock.timed(label, original))
    try:
        yield
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)


def layer_breakdown(bench: Bench, floor: FloorRow, rounds: int, gap_s: float = GAP_S) -> list[str]:
    """Row 1's calls, layer by layer, and the floor's, interleaved; medians in ms."""
    from search import BrowseTool, ToolContext

    tool = BrowseTool(bench.stage.settings)
    ctx = ToolContext(broadcasting=True)
    per_layer: dict[str, dict[str, list[float]]] = {
        w.name: defaultdict(list) for w in bench.workloads
    }
    floors: dict[str, list[float]] = defaultdict(list)

    def call(work: Workload) -> None:
        url = work.target if work.action == "read" else None
        walk = tool.run_sync(work.target, action=work.action, url=url, ctx=ctx)
        if walk.result is None or not walk.result.success:
            raise RuntimeError(f"{work.name}: no answer ({walk.chain})")

    try:
        for work in bench.workloads:  # warm-up, not timed
            call(work)
            tool.loop.run(tool.driver.stage_done(), 10)
        for _ in range(rounds):
            for work in bench.workloads:
                clock = Clock()
                with wrapped(clock):
                    started = time.perf_counter()
                    call(work)
                    total = time.perf_counter() - started
                    spent = dict(clock.spent)  # the call's: not the stage's work after it
                    tool.loop.run(tool.driver.stage_done(), 10)
                times = per_layer[work.name]
                for label in ORDER:
                    times[label].append(spent.get(label, 0.0) * 1000)
                times[REST].append((total - sum(spent.values())) * 1000)
                times["call"].append(total * 1000)
                started = time.perf_counter()
                floor.run(work)
                floors[work.name].append((time.perf_counter() - started) * 1000)
                floor.quiesce()
                time.sleep(gap_s)
    finally:
        with contextlib.suppress(Exception):
            tool.loop.run(tool.driver.close_owned_tab(), 10)
        tool.close()
    names = [w.name for w in bench.workloads]
    head = f"  {'layer (its own time, median ms)':<38}" + "".join(f"{n:>10}" for n in names)
    lines = [head]
    for label in (*ORDER, REST, "call"):
        cells = "".join(f"{statistics.median(per_layer[n][label]):>10.1f}" for n in names)
        lines.append(f"  {label:<38}{cells}")
    cells = "".join(f"{statistics.median(floors[n]):>10.1f}" for n in names)
    lines.append(f"  {'bare Playwright (goto + content)':<38}{cells}")
    lines.append(
        f"  ({rounds} rounds, calls and floor interleaved, {gap_s:.0f} s apart; each call "
        "waits for the stage's work after its answer before the next, so no layer waits on it)"
    )
    return lines
