"""Routing: the seed behaviour, exactly, over the whole matrix, with fake providers."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from pydantic import SecretStr
from structlog.testing import capture_logs

from browser_core import Settings
from gemini.testing import FakeGeminiApi, fake_calls, write_fake_gemini
from search import BrowseTool, Registry, ToolContext, mode_for
from search.providers.gemini import GeminiProvider
from search.testing import FakeProvider
from tests.conftest import make_settings

BROWSER = {"search": "google", "read": "read", "play": "youtube"}
MODEL = "gemini-2.5-flash"


def tool_with(settings: Settings, outcomes: dict[str, str]) -> tuple[BrowseTool, Registry]:
    registry = Registry()
    for name in ("google", "read", "youtube", "gemini"):
        registry.register(FakeProvider(name, behaviour=outcomes.get(name, "ok")))
    return BrowseTool(settings, registry=registry), registry


def expected(
    flag: bool, broadcasting: bool | None, action: str, browser_ok: bool, gemini_ok: bool
) -> str | None:
    """The seed behaviour written out plainly, independent of the routing table."""
    live = flag and (broadcasting if broadcasting is not None else flag)
    if action == "play":
        return "youtube" if live and browser_ok else None
    if live and browser_ok:
        return BROWSER[action]
    return "gemini" if gemini_ok else None


# The Gemini login kind (GEMINI_AUTH) is not an axis here: with a fake "gemini" provider
# nothing could depend on it. What it decides, the transport, is tested below.
MATRIX = list(
    itertools.product(
        [True, False],
        [True, False, None],
        ["search", "read", "play"],
        [True, False],
        [True, False],
    )
)


@pytest.mark.parametrize(("flag", "broadcasting", "action", "browser_ok", "gemini_ok"), MATRIX)
def test_routing_matrix(
    tmp_path: Path,
    flag: bool,
    broadcasting: bool | None,
    action: str,
    browser_ok: bool,
    gemini_ok: bool,
) -> None:
    settings = make_settings(None, tmp_path, stream_browser=flag, allow_hosts=("127.0.0.1",))
    outcomes = {
        BROWSER[action]: "ok" if browser_ok else "fail:cdp-unreachable",
        "gemini": "ok" if gemini_ok else "fail:gemini-auth",
    }
    tool, registry = tool_with(settings, outcomes)
    url = "http://127.0.0.1:9/page" if action == "read" else None  # no DNS: an IP literal
    walk = tool.run_sync(
        "what is new", action=action, url=url, ctx=ToolContext(broadcasting=broadcasting)
    )
    tool.close()
    want = expected(flag, broadcasting, action, browser_ok, gemini_ok)
    if want is None:
        refused = walk.result is not None and not walk.result.success
        assert walk.result is None or refused
        if action == "play" and not (flag and (broadcasting if broadcasting is not None else flag)):
            assert refused, "a play without a live broadcast is refused with a reply"
            assert walk.result is not None  # implied by `refused`; narrows the type
            assert ("disabled" in walk.result.reply_text) == (not flag)
    else:
        assert walk.result is not None and walk.result.success
        assert walk.result.provider == want
        assert walk.result.chain[-1].provider == want
    touched = [name for name, p in registry.providers.items() if p.calls]  # type: ignore[attr-defined]
    if not (flag and (broadcasting if broadcasting is not None else flag)):
        assert not set(touched) & {"google", "read", "youtube"}, "no screen when not live"


def test_none_means_no_signal_and_falls_back_to_the_master_flag(tmp_path: Path) -> None:
    assert mode_for(make_settings(None, tmp_path), ToolContext(broadcasting=None)) == "live"
    assert (
        mode_for(
            make_settings(None, tmp_path, stream_browser=False), ToolContext(broadcasting=True)
        )
        == "disabled"
    )
    assert mode_for(make_settings(None, tmp_path), ToolContext(broadcasting=False)) == "off"


def test_every_hop_is_logged_with_its_failure_kind_and_time(tmp_path: Path) -> None:
    settings = make_settings(None, tmp_path)
    tool, _ = tool_with(settings, {"google": "fail:captcha"})
    with capture_logs() as logs:
        walk = tool.run_sync("q", ctx=ToolContext(broadcasting=True))
    tool.close()
    assert walk.result is not None and walk.result.provider == "gemini"
    hops = [e for e in logs if e["event"] == "route.hop"]
    assert [(h["provider"], h["ok"], h["failure_kind"]) for h in hops] == [
        ("google", False, "captcha"),
        ("gemini", True, None),
    ]
    assert all(isinstance(h["elapsed_ms"], int) for h in hops)


def test_a_crashing_provider_is_one_more_failed_hop(tmp_path: Path) -> None:
    settings = make_settings(None, tmp_path)
    tool, _ = tool_with(settings, {"google": "crash", "gemini": "crash"})
    assert tool.call("q", ctx=ToolContext(broadcasting=True)) is None
    walk = tool.run_sync("q", ctx=ToolContext(broadcasting=True))
    tool.close()
    assert [hop.failure_kind for hop in walk.chain] == ["internal-error", "internal-error"]


# Every route that reaches Gemini: (STREAM_BROWSER, broadcasting, action, the browser's outcome).
GEMINI_ROUTES = [
    (True, False, "search", "ok"),  # broadcast off
    (True, False, "read", "ok"),
    (False, True, "search", "ok"),  # broadcasting disabled
    (True, True, "search", "fail:captcha"),  # live, the browser failed: the fallback
    (True, True, "read", "fail:cdp-unreachable"),
]


@pytest.mark.parametrize("auth", ["oauth", "apikey"])
@pytest.mark.parametrize(("flag", "broadcasting", "action", "browser"), GEMINI_ROUTES)
def test_the_gemini_login_kind_picks_the_transport_that_answers(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    auth: str,
    flag: bool,
    broadcasting: bool,
    action: str,
    browser: str,
) -> None:
    """oauth: the Gemini CLI answers (its Google login) and the REST API is never called;
    apikey: the REST API answers (the key) and no CLI is started."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    cli = write_fake_gemini(tmp_path / "bin", "success")
    with FakeGeminiApi({MODEL: "grounded"}) as api:
        settings = make_settings(
            None,
            tmp_path,
            stream_browser=flag,
            gemini_auth=auth,
            gemini_cli=str(cli),
            gemini_api_key=SecretStr("test-key-not-real"),
            gemini_api_base=api.base_url,
            gemini_model=MODEL,
            gemini_fallback_models=(MODEL,),
        )
        registry = Registry()
        for name in ("google", "read", "youtube"):
            registry.register(FakeProvider(name, behaviour=browser))
        registry.register(GeminiProvider())
        tool = BrowseTool(settings, registry=registry)
        url = "http://127.0.0.1:9/page" if action == "read" else None
        try:
            walk = tool.run_sync(
                "why is the sky blue", action=action, url=url, ctx=ToolContext(broadcasting)
            )
        finally:
            tool.close()
        api_calls = len(api.requests)
    cli_runs = len(fake_calls(tmp_path / "bin"))
    assert walk.result is not None and walk.result.success, walk.chain
    assert walk.result.provider == {"oauth": "gemini-cli", "apikey": "gemini-api"}[auth]
    assert (cli_runs, api_calls) == ((1, 0) if auth == "oauth" else (0, 1))
