"""Counters for `/metrics`: calls, failures by kind, latency, queue depth, Chrome health."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .._routing import Walk
from ._queue import CallQueue

LATENCY_BUCKETS_S = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 60.0)


@dataclass
class Metrics:
    """Counters for `/metrics`, written in the Prometheus text format (version 0.0.4).

    Written by hand rather than with `prometheus_client`: five families, no extra dependency
    and no process-global registry to reset between tests.
    """

    calls: Counter[tuple[str, str]] = field(default_factory=Counter)  # (action, outcome)
    hops: Counter[tuple[str, str]] = field(default_factory=Counter)  # (provider, failure kind)
    buckets: Counter[float] = field(default_factory=Counter)
    latency_sum_s: float = 0.0
    latency_count: int = 0

    def observe(self, action: str, walk: Walk, elapsed_s: float) -> None:
        result = walk.result
        outcome = "none" if result is None else ("ok" if result.success else "unsuccessful")
        self.calls[(action, outcome)] += 1
        for hop in walk.chain:
            self.hops[(hop.provider, str(hop.failure_kind or "none"))] += 1
        self.latency_sum_s += elapsed_s
        self.latency_count += 1
        for bound in LATENCY_BUCKETS_S:
            if elapsed_s <= bound:
                self.buckets[bound] += 1

    def reject(self, action: str, kind: str) -> None:
        self.calls[(action, kind)] += 1

    def render(self, queue: CallQueue, chrome: dict[str, Any]) -> str:
        lines: list[str] = []
        _family(lines, "stream_browser_calls_total", "counter", "calls by action and outcome")
        for (action, outcome), n in sorted(self.calls.items()):
            lines.append(f'stream_browser_calls_total{{action="{action}",outcome="{outcome}"}} {n}')
        _family(lines, "stream_browser_hops_total", "counter", "providers tried, by failure kind")
        for (provider, kind), n in sorted(self.hops.items()):
            lines.append(
                f'stream_browser_hops_total{{provider="{provider}",failure_kind="{kind}"}} {n}'
            )
        self._render_latency(lines)
        _family(lines, "stream_browser_queue_waiting", "gauge", "calls waiting for their turn")
        lines.append(f"stream_browser_queue_waiting {queue.waiting}")
        _family(lines, "stream_browser_queue_running", "gauge", "1 while a call runs")
        lines.append(f"stream_browser_queue_running {int(queue.running is not None)}")
        _family(lines, "stream_browser_chrome_up", "gauge", "1 when the broadcast Chrome answers")
        lines.append(f"stream_browser_chrome_up {int(bool(chrome.get('up')))}")
        _family(lines, "stream_browser_chrome_reconnects_total", "counter", "CDP reconnects")
        lines.append(f"stream_browser_chrome_reconnects_total {int(chrome.get('reconnects', 0))}")
        return "\n".join(lines) + "\n"

    def _render_latency(self, lines: list[str]) -> None:
        name = "stream_browser_call_seconds"
        _family(lines, name, "histogram", "time from a call's turn to its answer")
        for bound in LATENCY_BUCKETS_S:
            lines.append(f'{name}_bucket{{le="{bound}"}} {self.buckets[bound]}')
        lines.append(f'{name}_bucket{{le="+Inf"}} {self.latency_count}')
        lines.append(f"{name}_sum {self.latency_sum_s:.6f}")
        lines.append(f"{name}_count {self.latency_count}")


def _family(lines: list[str], name: str, kind: str, text: str) -> None:
    lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
