"""The burst row of `make bench`: ten reads queued at once on the one owned tab, against the
same ten reads one by one (each waiting for the last one's show), on the light article.

While a call waits for the tab the show after an answer yields (the stage stops at its marks,
the hold ends after `STAGE_HOLD_BUSY_S`), so the queue should cost close to the reads alone;
one by one, each read's full show runs before the next starts.
"""

from __future__ import annotations

import statistics
import threading
import time

from bench._common.serve import Served
from bench._common.stage import Stage

__all__ = ["burst_cost"]


def burst_cost(stage: Stage, body: bytes, count: int = 10, rounds: int = 3) -> list[str]:
    """Lines for the bench report: `count` queued reads against `count` sequential ones."""
    from search import BrowseTool, ToolContext

    tool = BrowseTool(stage.settings.model_copy(update={"cache_ttl_s": 0}))
    ctx = ToolContext(broadcasting=True)
    urls = [stage.server.add(f"/burst/{i}.html", Served(body)) for i in range(count)]
    lost: list[str] = []

    def read(url: str) -> None:
        walk = tool.run_sync(url, action="read", url=url, ctx=ctx)
        if walk.result is None or walk.result.provider != "read":
            lost.append(url)

    def queued() -> float:
        threads = [threading.Thread(target=read, args=(url,), daemon=True) for url in urls]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        return (time.perf_counter() - started) * 1000

    def one_by_one() -> float:
        started = time.perf_counter()
        for url in urls:
            read(url)
            tool.loop.run(tool.driver.stage_done(), 10)  # its show ends before the next
        return (time.perf_counter() - started) * 1000

    try:
        read(urls[0])  # warm: attached, the tab ours
        series: dict[str, list[float]] = {"queued": [], "one by one": []}
        for _ in range(rounds):
            series["queued"].append(queued())
            tool.loop.run(tool.driver.stage_done(), 10)
            series["one by one"].append(one_by_one())
    finally:
        tool.close()
    lines = [f"  {'reads':<12} {'median ms':>10} {'per read':>9}"]
    for name, values in series.items():
        median = statistics.median(values)
        lines.append(f"  {f'{count} {name}':<12} {median:>10.0f} {median / count:>9.0f}")
    ratio = statistics.median(series["queued"]) / statistics.median(series["one by one"])
    lines.append(
        f"  queued / one by one {ratio:.2f} ({rounds} rounds; {len(lost)} reads not answered"
        " from the screen)"
    )
    return lines
