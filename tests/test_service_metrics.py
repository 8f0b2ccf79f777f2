"""`/metrics` as an operator's scraper reads it: the text format parsed by `prometheus_client`'s
own parser, the process families a days-long broadcast is watched by, and counts that belong to
one service (no registry shared across the process)."""

from __future__ import annotations

from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from browser_core import FailureKind, Hop, ToolExecutionResult
from search._routing import Walk
from search.service import CallQueue, Metrics


def _families(metrics: Metrics, queue: CallQueue) -> dict[str, dict[tuple[str, ...], float]]:
    text = metrics.render(queue, {"up": True, "reconnects": 2})
    found: dict[str, dict[tuple[str, ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            key = tuple(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            found.setdefault(sample.name, {})[key] = sample.value
    return found


def _walk(ok: bool) -> Walk:
    hop = Hop(
        provider="read", ok=ok, elapsed_ms=5, failure_kind=None if ok else FailureKind.TIMEOUT
    )
    result = ToolExecutionResult(success=True, reply_text="x", provider="read") if ok else None
    return Walk(result, [hop])


def test_metrics_parse_as_prometheus_text_with_calls_hops_latency_and_live_gauges() -> None:
    metrics, queue = Metrics(), CallQueue(4)
    metrics.observe("read", _walk(True), 0.3)
    metrics.observe("read", _walk(False), 30.0)
    metrics.reject("search", FailureKind.QUEUE_FULL)
    found = _families(metrics, queue)
    calls = found["stream_browser_calls_total"]
    assert calls[("action=read", "outcome=ok")] == 1
    assert calls[("action=read", "outcome=none")] == 1
    assert calls[("action=search", "outcome=queue-full")] == 1
    assert found["stream_browser_hops_total"][("failure_kind=timeout", "provider=read")] == 1
    buckets = found["stream_browser_call_seconds_bucket"]
    assert buckets[("le=0.5",)] == 1 and buckets[("le=+Inf",)] == 2
    assert found["stream_browser_chrome_up"][()] == 1
    assert found["stream_browser_chrome_reconnects_total"][()] == 2
    assert found["stream_browser_queue_waiting"][()] == 0


def test_metrics_show_the_process_memory_cpu_and_open_files() -> None:
    found = _families(Metrics(), CallQueue(1))
    assert found["process_resident_memory_bytes"][()] > 10_000_000  # a Python with its imports
    assert found["process_open_fds"][()] > 0
    assert "process_cpu_seconds_total" in found


def test_two_services_in_one_process_never_share_a_count() -> None:
    first, second = Metrics(), Metrics()
    first.observe("read", _walk(True), 0.2)
    assert _families(first, CallQueue(1))["stream_browser_calls_total"]
    assert "stream_browser_calls_total" not in _families(second, CallQueue(1))


def test_every_sample_names_the_instance_so_broadcasts_are_told_apart() -> None:
    metrics = Metrics("broadcast-2")
    metrics.observe("read", _walk(True), 0.3)
    text = metrics.render(CallQueue(1), {"up": True})
    samples = [s for f in text_string_to_metric_families(text) for s in f.samples]
    assert len(samples) > 20  # calls, hops, latency, queue, Chrome, the process, GC
    assert {s.labels.get("sb_instance") for s in samples} == {"broadcast-2"}
    calls = [s for s in samples if s.name == "stream_browser_calls_total"]
    assert calls[0].labels == {"action": "read", "outcome": "ok", "sb_instance": "broadcast-2"}


def test_parses_are_counted_by_engine_and_health_and_the_suspect_ones_on_their_own() -> None:
    metrics, queue = Metrics(), CallQueue(1)
    parses: dict[str, dict[str, Any]] = {
        "google": {"last": "suspect", "ok": 3, "suspect": 2},
        "bing": {"ok": 1, "suspect": 0},
    }
    text = metrics.render(queue, {"up": True}, parses=parses)
    found: dict[str, dict[tuple[str, ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            key = tuple(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            found.setdefault(sample.name, {})[key] = sample.value
    assert found["stream_browser_parse_suspect_total"] == {
        ("engine=bing",): 0,
        ("engine=google",): 2,
    }
    parsed = found["stream_browser_parses_total"]
    assert (
        parsed[("engine=google", "health=ok")] == 3
        and parsed[("engine=google", "health=suspect")] == 2
    )
