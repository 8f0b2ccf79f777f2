"""The brain-facing tool: action choice, deadline, cache, never raising."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from search import TOOL_DECLARATION, BrowseTool, Registry, ToolContext
from search._tool import resolve
from search.testing import FakeProvider
from tests.conftest import make_settings

# Time or memory is part of what it checks: `make test` runs it alone, after the rest.
pytestmark = pytest.mark.serial


LIVE = ToolContext(broadcasting=True)


def make_tool(tmp_path: Path, **outcomes: str) -> tuple[BrowseTool, Registry]:
    settings_extra = {k: v for k, v in outcomes.items() if k.startswith("_")}
    registry = Registry()
    for name in ("google", "read", "youtube", "gemini"):
        registry.register(FakeProvider(name, behaviour=outcomes.get(name, "ok")))
    settings = make_settings(None, tmp_path, **{k[1:]: float(v) for k, v in settings_extra.items()})
    return BrowseTool(settings, registry=registry), registry


@pytest.mark.parametrize(
    ("query", "action", "url", "want_action", "want_url"),
    [
        ("weather in Seoul", "auto", None, "search", None),
        ("https://example.com/a", "auto", None, "read", "https://example.com/a"),
        ("summarize it", "auto", "https://example.com/b", "read", "https://example.com/b"),
        ("lofi radio", "play", None, "play", None),
        ("https://example.com/c", "read", None, "read", "https://example.com/c"),
    ],
)
def test_auto_reads_a_url_and_searches_otherwise(
    query: str, action: str, url: str | None, want_action: str, want_url: str | None
) -> None:
    request = resolve(query, action, url)
    assert (request.action, request.url) == (want_action, want_url)


def test_an_unknown_action_is_a_usage_error_not_a_crash(tmp_path: Path) -> None:
    tool, _ = make_tool(tmp_path)
    assert tool.call("q", action="dance", ctx=LIVE) is None
    tool.close()


def test_the_deadline_moves_on_from_a_hanging_browser_to_gemini(tmp_path: Path) -> None:
    tool, _ = make_tool(tmp_path, google="sleep:30", _call_deadline_s="3")
    started = time.monotonic()
    result = tool.call("q", ctx=LIVE)
    elapsed = time.monotonic() - started
    tool.close()
    assert result is not None and result.provider == "gemini"
    assert elapsed < 4.0
    assert result.chain[0].failure_kind == "timeout"


def test_the_deadline_bounds_the_whole_call_when_everything_hangs(tmp_path: Path) -> None:
    tool, _ = make_tool(
        tmp_path, google="sleep:30", gemini="sleep:30", _call_deadline_s="2", _gemini_min_s="0"
    )
    started = time.monotonic()
    assert tool.call("q", ctx=LIVE) is None
    assert time.monotonic() - started < 4.5
    tool.close()


def test_a_hanging_browser_still_leaves_gemini_its_floor(tmp_path: Path) -> None:
    # Without the floor Gemini would get the 2 s left of the 5 s deadline and time out.
    tool, _ = make_tool(
        tmp_path, google="sleep:30", gemini="sleep:3.5", _call_deadline_s="5", _gemini_min_s="4"
    )
    walk = tool.run_sync("q", ctx=LIVE)
    tool.close()
    assert walk.result is not None and walk.result.provider == "gemini", walk.chain
    assert walk.chain[0].failure_kind == "timeout"


def test_a_gemini_that_runs_out_of_time_is_a_gemini_timeout_whichever_timer_fired(
    tmp_path: Path,
) -> None:
    tool, _ = make_tool(
        tmp_path,
        google="fail:cdp-unreachable",
        gemini="sleep:30",
        _call_deadline_s="1",
        _gemini_min_s="0.5",
    )
    walk = tool.run_sync("q", ctx=LIVE)
    tool.close()
    assert walk.result is None
    assert [hop.failure_kind for hop in walk.chain] == ["cdp-unreachable", "gemini-timeout"]
    assert tool.last_walk is walk


def test_the_cache_serves_an_identical_query_off_screen_in_the_same_mode(tmp_path: Path) -> None:
    tool, registry = make_tool(tmp_path, _cache_ttl_s="60")
    off = ToolContext(broadcasting=False)
    first = tool.call("Same  Question", ctx=off)
    second = tool.call("same question", ctx=off)
    live = tool.call("same question", ctx=LIVE)
    tool.close()
    assert first is not None and second is not None and live is not None
    assert len(registry.providers["gemini"].calls) == 1  # type: ignore[attr-defined]
    assert second.reply_text == first.reply_text
    assert live.provider == "google"  # another mode is another entry


def test_a_live_call_is_never_answered_from_the_cache(tmp_path: Path) -> None:
    """The audience watches a live call: the same question asked again is searched again on
    screen (an answer from the cache would leave the tab on whatever it showed)."""
    tool, registry = make_tool(tmp_path, _cache_ttl_s="60")
    first = tool.call("same question", ctx=LIVE)
    second = tool.call("same question", ctx=LIVE)
    tool.close()
    assert first is not None and second is not None
    assert len(registry.providers["google"].calls) == 2  # type: ignore[attr-defined]


def test_the_cache_is_off_when_its_ttl_is_zero(tmp_path: Path) -> None:
    tool, registry = make_tool(tmp_path)
    tool.call("q", ctx=LIVE)
    tool.call("q", ctx=LIVE)
    tool.close()
    assert len(registry.providers["google"].calls) == 2  # type: ignore[attr-defined]


def test_empty_and_whitespace_queries_return_none(tmp_path: Path) -> None:
    tool, registry = make_tool(tmp_path)
    assert tool.call("", ctx=LIVE) is None
    assert tool.call(" \t\n ", ctx=LIVE) is None
    tool.close()
    assert not registry.providers["google"].calls  # type: ignore[attr-defined]


def test_many_threads_all_get_answers(tmp_path: Path) -> None:
    tool, _ = make_tool(tmp_path, google="sleep:0.05")
    results: dict[int, object] = {}

    def worker(n: int) -> None:
        results[n] = tool.call(f"q{n}", ctx=LIVE)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    tool.close()
    assert len(results) == 20
    assert all(r is not None and f"q{n}" in r.reply_text for n, r in results.items())  # type: ignore[attr-defined]


def test_the_declaration_offers_the_actions_to_the_llm() -> None:
    params = TOOL_DECLARATION["parameters"]
    assert TOOL_DECLARATION["name"] == "browse_and_search"
    assert params["properties"]["action"]["enum"] == [
        "auto",
        "search",
        "read",
        "play",
        "pause",
        "resume",
        "stop",
        "status",
    ]
    assert params["required"] == ["query"]


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "http://169.254.169.254/latest/",
        "javascript:alert(1)",
        "http://127.0.0.1:9222/json",
    ],
)
def test_a_refused_address_is_refused_for_every_provider(tmp_path: Path, url: str) -> None:
    tool, registry = make_tool(tmp_path)
    tool.settings = tool.settings.model_copy(update={"allow_hosts": ()})
    tool.driver.settings = tool.settings
    walk = tool.run_sync("read it", action="read", url=url, ctx=LIVE)
    tool.close()
    assert walk.result is not None and not walk.result.success
    assert "can't open that address" in walk.result.reply_text
    assert [hop.failure_kind for hop in walk.chain] == ["blocked-url"]
    assert not any(p.calls for p in registry.providers.values())  # type: ignore[attr-defined]
