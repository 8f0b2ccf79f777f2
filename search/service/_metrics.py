"""`/metrics` through `prometheus_client`: calls, failures by kind, latency, queue depth, Chrome
health, and the process itself (resident memory, CPU, open file descriptors).

Each `Metrics` has a registry of its own (no process-global state: two services in one
process, or one per test, never share a count). The queue and Chrome families are read when
scraped, so they are never stale. Every sample carries the instance's name as `sb_instance`
(one service per broadcast; Prometheus keeps `instance` for the scraped address).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from .._routing import Walk
from ._queue import CallQueue

LATENCY_BUCKETS_S = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 60.0)
CONTENT_TYPE = CONTENT_TYPE_LATEST


@dataclass(eq=False)  # the registry keys its collectors by identity
class _Live(Collector):
    """The families read at scrape time: the queue and the broadcast Chrome's health."""

    queue: CallQueue | None = None
    chrome: dict[str, Any] = field(default_factory=dict)
    engines: dict[str, dict[str, Any]] = field(default_factory=dict)
    alerts: list[dict[str, Any]] = field(default_factory=list)
    parses: dict[str, dict[str, Any]] = field(default_factory=dict)

    def collect(self) -> Iterator[Metric]:
        waiting = self.queue.waiting if self.queue else 0
        running = int(self.queue is not None and self.queue.running is not None)
        yield GaugeMetricFamily(
            "stream_browser_queue_waiting", "calls waiting for their turn", value=waiting
        )
        yield GaugeMetricFamily(
            "stream_browser_queue_running", "1 while a call runs", value=running
        )
        yield GaugeMetricFamily(
            "stream_browser_chrome_up",
            "1 when the broadcast Chrome answers",
            value=int(bool(self.chrome.get("up"))),
        )
        yield CounterMetricFamily(
            "stream_browser_chrome_reconnects",
            "CDP reconnects",
            value=int(self.chrome.get("reconnects", 0)),
        )
        resting = GaugeMetricFamily(
            "stream_browser_engine_resting",
            "1 while a search engine rests after it refused (its challenge or consent wall)",
            labels=["engine"],
        )
        for name, state in sorted(self.engines.items()):
            resting.add_metric([name], int(bool(state.get("resting"))))
        yield resting
        yield GaugeMetricFamily(
            "stream_browser_alerts",
            "open alerts: search engines refusing the broadcast Chrome, or whose results page "
            "may have changed (0 when none)",
            value=len(self.alerts),
        )
        yield self._alerts()
        yield from self._parses()

    def _parses(self) -> Iterator[Metric]:
        """Results pages parsed, by engine and health; the suspect ones on their own too."""
        parsed = CounterMetricFamily(
            "stream_browser_parses",
            "results pages parsed, by engine and health (ok, recovered: read from the page's "
            "structure when its markup found too few, suspect)",
            labels=("engine", "health"),
        )
        suspect = CounterMetricFamily(
            "stream_browser_parse_suspect",
            "results pages whose parse was suspect (the page may have changed: see the console)",
            labels=("engine",),
        )
        for engine, state in sorted(self.parses.items()):
            for health in ("ok", "recovered", "suspect"):
                parsed.add_metric((engine, health), int(state.get(health, 0)))
            suspect.add_metric((engine,), int(state.get("suspect", 0)))
        yield parsed
        yield suspect

    def _alerts(self) -> Metric:
        """1 per search engine that refused us (captcha, consent) until solved or dismissed;
        no sample when none did."""
        family = GaugeMetricFamily(
            "stream_browser_alert",
            "1 while a search engine refuses the broadcast Chrome (solve it in the console)",
            labels=("provider", "failure_kind"),
        )
        for alert in self.alerts:
            family.add_metric((str(alert["provider"]), str(alert["kind"])), 1)
        return family


INSTANCE_LABEL = "sb_instance"


class _Named(CollectorRegistry):
    """A registry whose every sample also carries `sb_instance="NAME"`."""

    def __init__(self, instance: str) -> None:
        super().__init__()
        self.instance = instance

    def collect(self) -> Iterator[Metric]:
        for family in super().collect():
            if self.instance:
                family.samples = [
                    sample._replace(labels={**sample.labels, INSTANCE_LABEL: self.instance})
                    for sample in family.samples
                ]
            yield family


class Metrics:
    """The service's counters in a registry of its own, rendered in the Prometheus text format."""

    def __init__(self, instance: str = "") -> None:
        self.registry = _Named(instance)
        self.calls = Counter(
            "stream_browser_calls",
            "calls by action and outcome",
            ("action", "outcome"),
            registry=self.registry,
        )
        self.hops = Counter(
            "stream_browser_hops",
            "providers tried, by failure kind",
            ("provider", "failure_kind"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "stream_browser_call_seconds",
            "time from a call's turn to its answer",
            buckets=LATENCY_BUCKETS_S,
            registry=self.registry,
        )
        self._live = _Live()
        self.registry.register(self._live)
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)

    def observe(self, action: str, walk: Walk, elapsed_s: float) -> None:
        result = walk.result
        outcome = "none" if result is None else ("ok" if result.success else "unsuccessful")
        self.calls.labels(action, outcome).inc()
        for hop in walk.chain:
            self.hops.labels(hop.provider, str(hop.failure_kind or "none")).inc()
        self.latency.observe(elapsed_s)

    def reject(self, action: str, kind: str) -> None:
        self.calls.labels(action, str(kind)).inc()

    def render(
        self,
        queue: CallQueue,
        chrome: dict[str, Any],
        alerts: list[dict[str, Any]] | None = None,
        engines: dict[str, dict[str, Any]] | None = None,
        parses: dict[str, dict[str, Any]] | None = None,
    ) -> str:
        self._live.queue, self._live.chrome = queue, chrome
        self._live.alerts = alerts or []
        self._live.engines = engines or {}
        self._live.parses = parses or {}
        return generate_latest(self.registry).decode("utf-8")
