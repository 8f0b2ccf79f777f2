"""The real Gemini CLI (the pinned npm @google/gemini-cli in .tools/) answering through our
code against a loopback stand-in of the Gemini API (tests/_gemini_api.py).

What differs from production is the CLI's auth variables alone: GEMINI_CLI points at a
wrapper that sets an API key and the stand-in's gateway URL (GOOGLE_GEMINI_BASE_URL),
removes GOOGLE_GENAI_USE_GCA (which our oauth path forces), then execs the real CLI with our
argv and the rest of our environment untouched (keys stripped, NO_BROWSER, no relaunch,
the private working directory). The temp HOME's `.gemini/settings.json` selects API-key
auth (the JSON the CLI prints is the same whatever the auth), and for the 500 case only
sets `general.maxAttempts: 1` (the CLI retries a 5xx with a 5 s+ backoff otherwise).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

import gemini
import search
import search._tool as tool_module
import search.cli
from browser_core import Settings, build_settings, parse_envelope
from gemini._cli import PROJECT_ROOT
from gemini._sync import run_sync
from gemini.testing import session_files
from tests._gemini_api import PAGES, GeminiApiStandIn

pytestmark = [pytest.mark.realcli, pytest.mark.slow]

REAL_CLI = PROJECT_ROOT / ".tools" / "node_modules" / ".bin" / "gemini"
KEY = "AIza-stand-in-key-not-real"
QUERY = "why is the sky blue?"
# The stand-in's answer with [3] (which names no page) removed.
EXPECTED_TEXT = (
    "The sky is blue because air scatters blue light more than red [1][2]. "
    "Sunsets look red for the same reason."
)
MAIN_MODEL = "gemini-3.8-flash"  # what 0.61 picks for a simple question; the router is first

WRAPPER = """#!/bin/sh
# Test only: the CLI's auth variables; everything else is what stream-browser passed.
unset GOOGLE_GENAI_USE_GCA
export GEMINI_API_KEY={key}
export GOOGLE_GEMINI_BASE_URL={base_url}
exec {cli} "$@"
"""


@dataclass
class Site:
    """The stand-in, a temp HOME for the CLI, and settings whose GEMINI_CLI is the wrapper."""

    api: GeminiApiStandIn
    home: Path
    tmp: Path
    settings: Settings


def _real_cli() -> Path:
    if not REAL_CLI.is_file():
        pytest.skip(
            f"the pinned Gemini CLI is not in {REAL_CLI.parent}: run `make tools` "
            "(npm installs @google/gemini-cli into .tools/)"
        )
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the Gemini CLI needs Node.js 20+")
    return REAL_CLI


def _home(tmp_path: Path, cli_settings: dict[str, Any]) -> Path:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}, **cli_settings}
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    return home


def _wrapper(folder: Path, api: GeminiApiStandIn) -> Path:
    folder.mkdir()
    path = folder / "gemini-with-stand-in-auth"
    path.write_text(WRAPPER.format(key=KEY, base_url=api.base_url, cli=_real_cli()))
    path.chmod(0o755)
    return path


@pytest.fixture
def site(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Site]:
    """`@pytest.mark.parametrize("site", [scenario], indirect=True)` picks the stand-in's
    scenario (default: success)."""
    scenario = getattr(request, "param", "success")
    cli = _real_cli()
    for name in list(os.environ):
        if name.startswith(("GEMINI_", "GOOGLE_")) or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    retries = {"general": {"maxAttempts": 1}} if scenario == "server-error" else {}
    home, systmp = _home(tmp_path, retries), tmp_path / "systmp"
    systmp.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TMPDIR", str(systmp))  # where the CLI writes its error reports
    monkeypatch.setenv("DISPLAY", ":99")  # a trap: our environment must drop it
    monkeypatch.setattr(tempfile, "tempdir", str(systmp))
    with GeminiApiStandIn(scenario) as api:
        settings = build_settings(
            gemini_auth="oauth",
            gemini_cli=str(_wrapper(tmp_path / "bin", api)),
            gemini_timeout_s=60,
            call_deadline_s=90,
            cache_ttl_s=0,
        )
        assert cli.is_file() and session_files(home) == []
        yield Site(api, home, systmp, settings)


def _assert_nothing_left(site: Site) -> None:
    assert session_files(site.home) == []
    assert list((site.home / ".gemini" / "tmp").glob("*/chats/*")) == []
    assert list(site.tmp.glob("gemini-client-error-*")) == []


def _assert_the_answer(result: dict[str, Any], site: Site) -> None:
    envelope = parse_envelope(result["reply_text"])
    assert envelope.body.startswith(EXPECTED_TEXT)
    assert "[3]" not in envelope.body
    assert [(s["title"], s["url"]) for s in result["sources"]] == list(PAGES)
    assert envelope.header["sources"].split(" | ") == [url for _, url in PAGES]
    assert f"[1] {PAGES[0][0]} - {PAGES[0][1]}" in envelope.body
    assert result["data"]["model"] == MAIN_MODEL
    assert result["provider"] == "gemini-cli" and result["success"] is True


def test_stream_browser_gemini_returns_the_answer_with_its_two_sources_and_leaves_nothing(
    site: Site, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GEMINI_CLI", site.settings.gemini_cli or "")
    monkeypatch.setenv("GEMINI_TIMEOUT_S", "60")
    monkeypatch.chdir(site.tmp)  # no .env of the project is read
    with capture_logs() as logs:
        code = search.cli.main(["gemini", "--json", QUERY])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    _assert_the_answer(json.loads(captured.out), site)
    assert not [e for e in logs if e["log_level"] == "warning"]
    _assert_nothing_left(site)
    main_turns = site.api.main_calls()
    assert [call.model for call in main_turns] == [MAIN_MODEL, MAIN_MODEL]
    assert any("googleSearch" in json.dumps(call.body) for call in site.api.calls)
    assert {call.api_key for call in site.api.calls} == {KEY}  # the wrapper's, nothing else


def test_browse_and_search_off_air_answers_from_the_real_cli_with_its_sources(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tool_module, "_default", None)  # restored after the test
    tool = search.configure(site.settings)
    try:
        result = search.browse_and_search(QUERY, ctx=search.ToolContext(broadcasting=False))
    finally:
        tool.close()
    assert result is not None
    _assert_the_answer(result.model_dump(), site)
    _assert_nothing_left(site)


@pytest.mark.parametrize(
    ("site", "kind"),
    [
        ("quota", "gemini-quota"),
        ("server-error", "gemini-unavailable"),
        ("malformed", "gemini-bad-response"),
    ],
    indirect=["site"],
)
def test_the_real_clis_error_shapes_map_to_their_failure_kinds_and_leave_nothing(
    site: Site, kind: str
) -> None:
    with pytest.raises(gemini.GeminiError) as info:
        run_sync(gemini.ask_cli(QUERY, site.settings))
    assert info.value.kind == kind, info.value.message
    assert info.value.hint
    assert KEY not in info.value.message
    assert len(site.api.main_calls()) == 1  # answered once, not retried into the timeout
    _assert_nothing_left(site)
