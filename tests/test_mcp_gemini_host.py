"""The real Gemini CLI (0.61, `.tools/`) as the MCP host: `gemini -p` calls our `browse`
tool and shows its result, over stdio and over HTTP with the bearer token, with the model
played by the loopback stand-in of the Gemini API (tests/_gemini_api.py, "tool-calls").

The CLI's settings are the documented Gemini snippet of docs/mcp.md (one server of it,
paths, port and token filled in) plus what headless use needs, as docs/mcp.md says:
`"trust": true` on the entry (0.61 in non-interactive mode denies, and so does not even
declare to the model, every tool that would ask for approval), API-key auth against the
stand-in (`GEMINI_API_KEY`, `GOOGLE_GEMINI_BASE_URL`) and a trusted folder. The stand-in's
model calls the tool the CLI declares (`mcp_<server>_browse`), once to read a loopback page
and once with a bad argument, then answers by quoting both function responses: the page's
text in what the user sees proves the tool's result reached the model.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from browser_core import ChromeProcess
from tests._gemini_api import GeminiApiStandIn, ToolCall, function_responses
from tests._server import LocalServer, Reply
from tests._service_proc import (  # noqa: F401 (shared_service is a fixture)
    ServiceProc,
    close_owned_tab,
    shared_service,
)
from tests.test_mcp_clients import ARTICLE, NAMES, NODE
from tests.test_mcp_hosts import BIN, _fill, _snippet

pytestmark = [
    pytest.mark.realcli,
    pytest.mark.skipif(
        NODE is None or not (BIN / "gemini").exists(),
        reason="the Gemini CLI is not in .tools (run `make tools`) or node is missing",
    ),
]

KEY = "AIza-stand-in-key-not-real"


@pytest.fixture
def svc(shared_service: ServiceProc) -> ServiceProc:  # noqa: F811
    return shared_service


@dataclass
class Run:
    """One `gemini -p` run: what it printed, and every request the stand-in answered."""

    code: int
    shown: dict[str, Any]
    stderr: str
    api: GeminiApiStandIn

    def declared(self) -> list[str]:
        body = self.api.main_calls()[0].body
        tools = body.get("tools") or []
        return [f["name"] for tool in tools for f in tool.get("functionDeclarations") or []]

    def responses(self) -> list[dict[str, Any]]:
        return function_responses(self.api.main_calls()[-1].body)


def _settings(server: str, trust: bool, filled: dict[str, Any]) -> dict[str, Any]:
    entry = dict(filled["mcpServers"][server])
    if "command" in entry:  # a stdio server that may read the loopback page
        entry["env"] = {
            **entry["env"],
            "SB_ALLOW_HOSTS": "127.0.0.1",
            "SB_CACHE_TTL_S": "0",
            "SB_SETTLE_MS": "200",
        }
    if trust:
        entry["trust"] = True
    auth = {"auth": {"selectedType": "gemini-api-key"}}
    return {"security": auth, "mcpServers": {server: entry}}


def _run_gemini(home: Path, settings: dict[str, Any], calls: tuple[ToolCall, ...]) -> Run:
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    (home / "work").mkdir(exist_ok=True)
    with GeminiApiStandIn("tool-calls", tool_calls=calls) as api:
        env = {
            "PATH": f"{Path(NODE or '/usr/bin/node').parent}:/usr/bin:/bin",
            "HOME": str(home),
            "GEMINI_API_KEY": KEY,
            "GOOGLE_GEMINI_BASE_URL": api.base_url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "NO_BROWSER": "true",
        }
        argv = [str(BIN / "gemini"), "-p", "What does the harbour page say?", "-o", "json"]
        done = subprocess.run(
            argv, cwd=home / "work", env=env, capture_output=True, text=True, timeout=150
        )
    assert done.stdout.strip(), done.stderr[-2000:]
    return Run(done.returncode, json.loads(done.stdout), done.stderr, api)


def _calls(server: str, page: str) -> tuple[ToolCall, ...]:
    browse = f"mcp_{server}_browse"
    return (
        (browse, {"query": "ferry", "url": page, "broadcasting": True}),
        (browse, {"query": "ferry", "url": "file:///etc/passwd", "broadcasting": True}),
        (browse, {"query": "ferry", "action": "dance"}),  # not one of auto, search, read
    )


def _assert_read_and_failure_reached_the_model_and_the_user(run: Run, server: str) -> None:
    assert run.code == 0, run.stderr[-2000:]
    assert [f"mcp_{server}_{name}" for name in NAMES] == [
        name for name in run.declared() if name.startswith("mcp_")
    ]
    read, refused, invalid = (json.dumps(response) for response in run.responses())
    assert "forty minutes" in read and "UNTRUSTED_WEB_EXTRACT" in read, read
    assert "failure_kind: blocked-url" in refused, refused
    assert "fix: only http and https pages can be opened" in refused, refused
    # the CLI checks arguments against our input schema itself: the server is not called
    assert "params/action must be equal to one of the allowed values" in invalid, invalid
    shown = run.shown["response"]  # what `gemini -p` prints for the user
    assert "forty minutes in winter" in shown
    assert "failure_kind: blocked-url" in shown and "fix: only http and https" in shown
    used = run.shown["stats"]["tools"]["byName"][f"mcp_{server}_browse"]
    assert (used["count"], used["success"], used["fail"]) == (3, 1, 2), used


@pytest.mark.slow
def test_gemini_cli_calls_the_stdio_server_and_relays_the_page_and_a_failures_kind_and_fix(
    chrome: ChromeProcess, svc: ServiceProc, http: LocalServer, tmp_path: Path
) -> None:
    page = http.route("/harbour-gemini-stdio", Reply(ARTICLE))
    filled = _fill(_snippet("gemini"), svc, chrome, tmp_path)
    settings = _settings("stream-browser", True, filled)
    try:
        run = _run_gemini(tmp_path, settings, _calls("stream-browser", page))
    finally:
        close_owned_tab(chrome, tmp_path / "state")
    _assert_read_and_failure_reached_the_model_and_the_user(run, "stream-browser")


def test_gemini_cli_calls_the_service_over_http_with_the_token_and_relays_the_page_and_a_failure(
    chrome: ChromeProcess, svc: ServiceProc, http: LocalServer, tmp_path: Path
) -> None:
    page = http.route("/harbour-gemini-http", Reply(ARTICLE))
    filled = _fill(_snippet("gemini"), svc, chrome, tmp_path)
    entry = filled["mcpServers"]["stream-browser-http"]
    assert entry["headers"] == {"Authorization": f"Bearer {svc.token}"}
    settings = _settings("stream-browser-http", True, filled)
    run = _run_gemini(tmp_path, settings, _calls("stream-browser-http", page))
    _assert_read_and_failure_reached_the_model_and_the_user(run, "stream-browser-http")
    calls = [e for e in svc.events("mcp.call") if e.get("tool") == "browse"]
    assert [e.get("failure_kind") for e in calls[-2:]] == [None, "blocked-url"], calls


def test_headless_gemini_cli_offers_an_untrusted_servers_tools_to_no_model(
    chrome: ChromeProcess, svc: ServiceProc, tmp_path: Path
) -> None:
    filled = _fill(_snippet("gemini"), svc, chrome, tmp_path)
    settings = _settings("stream-browser-http", False, filled)
    calls: tuple[ToolCall, ...] = (("mcp_stream-browser-http_status", {}),)
    run = _run_gemini(tmp_path, settings, calls)
    assert [name for name in run.declared() if name.startswith("mcp_")] == []
    (refused,) = run.responses()
    assert "not found" in refused["response"]["error"], refused
