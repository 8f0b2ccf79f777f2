"""Alerts (search/_alerts.py): a search engine that refuses the broadcast Chrome (its captcha,
its consent wall, any blocked kind) is told at once, in `/v1/status`, `/metrics` and the log,
and stays told until a later search on screen succeeds or a person dismisses it."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from structlog.testing import capture_logs

from search import BrowseTool, Registry, ToolContext
from search.service import Service
from search.testing import FakeProvider
from tests.conftest import make_settings

LIVE = ToolContext(broadcasting=True)


def _tool(tmp_path: Path, google: str) -> tuple[BrowseTool, FakeProvider]:
    registry = Registry()
    engine = FakeProvider("google", behaviour=google)
    for provider in (engine, FakeProvider("read"), FakeProvider("youtube")):
        registry.register(provider)
    registry.register(FakeProvider("gemini"))
    return BrowseTool(make_settings(None, tmp_path), registry=registry), engine


def _alert_samples(service: Service) -> dict[str, list[tuple[dict[str, str], float]]]:
    text = service.metrics.render(service.queue, service.chrome(), service.alerts())
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.startswith("stream_browser_alert"):
                labels = {k: v for k, v in sample.labels.items() if k != "sb_instance"}
                found.setdefault(sample.name, []).append((labels, sample.value))
    return found


@pytest.mark.parametrize("kind", ["captcha", "consent", "blocked"])
def test_a_refused_search_raises_an_alert_in_status_metrics_and_the_log(
    tmp_path: Path, kind: str
) -> None:
    tool, _ = _tool(tmp_path, f"fail:{kind}")
    service = Service.create(tool.settings, tool)
    with capture_logs() as logs:
        walk = tool.run_sync("weather in Seoul", ctx=LIVE)
    tool.close()
    assert walk.result is not None and walk.result.provider == "gemini"
    (alert,) = service.status()["alerts"]
    assert alert["provider"] == "google" and alert["kind"] == kind and alert["count"] == 1
    samples = _alert_samples(service)
    assert samples["stream_browser_alerts"] == [({}, 1.0)]
    assert samples["stream_browser_alert"] == [({"provider": "google", "failure_kind": kind}, 1)]
    raised = [e for e in logs if e["event"] == "alert.raised"]
    assert raised and raised[0]["log_level"] == "warning" and raised[0]["failure_kind"] == kind


def test_the_alert_stays_through_more_refusals_and_clears_when_a_search_succeeds(
    tmp_path: Path,
) -> None:
    tool, google = _tool(tmp_path, "fail:captcha")
    tool.run_sync("first", ctx=LIVE)
    tool.run_sync("second", ctx=LIVE)
    assert [a["count"] for a in tool.alerts.active()] == [2], "one alert, seen twice"
    tool.run_sync("a read does not clear it", action="read", url="https://example.com/", ctx=LIVE)
    assert tool.alerts.active(), "only the refusing provider's own success clears it"
    google.behaviour = "ok"  # the person solved the challenge in the broadcast Chrome
    with capture_logs() as logs:
        walk = tool.run_sync("third", ctx=LIVE)
    tool.close()
    assert walk.result is not None and walk.result.provider == "google"
    assert tool.alerts.active() == []
    cleared = [e for e in logs if e["event"] == "alert.cleared"]
    assert cleared and cleared[0]["provider"] == "google"


def test_other_failures_raise_no_alert_and_a_dismissed_alert_is_gone(tmp_path: Path) -> None:
    tool, google = _tool(tmp_path, "fail:timeout")
    tool.run_sync("slow", ctx=LIVE)
    assert tool.alerts.active() == []
    google.behaviour = "fail:captcha"
    tool.run_sync("refused", ctx=LIVE)
    tool.close()
    assert tool.alerts.clear("google", by="dismissed in the console")
    assert tool.alerts.active() == [] and not tool.alerts.clear("google", by="twice")


def test_a_suspect_parse_has_its_own_alert_beside_a_refusal_and_its_own_way_out() -> None:
    from browser_core import FailureKind, Hop
    from search._alerts import PARSE_SUSPECT, Alerts

    alerts = Alerts()
    alerts.parse_suspect("google", "Google", ["4 outside links in the main column"])
    alerts.observe(
        [Hop(provider="google", ok=False, elapsed_ms=1, failure_kind=FailureKind.CAPTCHA)]
    )
    assert sorted(str(a["kind"]) for a in alerts.active()) == ["captcha", PARSE_SUSPECT]
    (parse,) = [a for a in alerts.active() if a["kind"] == PARSE_SUSPECT]
    assert parse["message"] == "Google's results page may have changed"
    assert parse["detail"] == "4 outside links in the main column"
    alerts.note_case("google", "20261207T000000Z-google-sky")
    # A search that succeeds ends the refusal, not the suspect parse (only an ok parse does).
    alerts.observe([Hop(provider="google", ok=True, elapsed_ms=1)])
    assert [(a["kind"], a["case"]) for a in alerts.active()] == [
        (PARSE_SUSPECT, "20261207T000000Z-google-sky")
    ]
    alerts.parse_suspect("google", "Google", ["again"])
    assert alerts.active()[0]["count"] == 2
    assert alerts.clear("google", by="a later Google parse was ok", kind=PARSE_SUSPECT)
    assert alerts.active() == []
