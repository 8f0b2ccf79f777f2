"""The MCP faces, driven by the SDK's own client: `stream-browser mcp` over stdio (a real
subprocess, the session Chromium, the Gemini fake), the service's `/mcp` endpoint over
streamable HTTP (a real `stream-browser serve`, with and without its token), and the
in-process server for the failure paths (a hang, a crash) no real provider shows on demand."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.memory import create_connected_server_and_client_session

from browser_core import ChromeProcess, Hop, parse_envelope
from browser_core.chrome import close_target, free_port
from gemini.testing import write_fake_gemini
from search import client
from search import mcp as _mcp
from search._routing import Walk
from search._tool import BrowseTool
from search._types import SPECS, ToolContext
from search.mcp import TOOLS, build_server
from search.testing import FakeProvider
from tests._server import LocalServer, Reply
from tests._service_proc import ServiceProc, start_service, wait_until
from tests.conftest import make_settings

COMMAND = str(Path(sys.executable).parent / "stream-browser")
ARTICLE = (
    "<html><head><title>Harbour news</title></head><body><article><h1>Harbour news</h1>"
    + "<p>The ferry to the islands now leaves every forty minutes in winter.</p>" * 6
    + "</article></body></html>"
)
YOUTUBE_CASE = "youtube-play-first-result-ru"  # tests/recordings: real results page, local video
NAMES = ["browse", "play", "pause", "resume", "stop", "status"]


@pytest.fixture
def mcp_env(tmp_path: Path, chrome: ChromeProcess) -> dict[str, str]:
    """The server's environment: the session Chrome, the Gemini fake, nothing from `.env`."""
    fake = write_fake_gemini(tmp_path / "bin", "success")
    return {
        "HOME": str(tmp_path),
        "CDP_PORT": str(chrome.port),
        "GEMINI_CLI": str(fake),
        "SB_STATE_DIR": str(tmp_path / "state"),
        "SB_ALLOW_HOSTS": "127.0.0.1",
        "SB_CACHE_TTL_S": "0",
        "SB_SETTLE_MS": "200",
        "SB_LOG_FORMAT": "json",
        "SB_LOG_LEVEL": "info",
        "SB_SERVICE_URL": "off",  # in process, even if a developer's service is running
        "SB_RECORDINGS_DIR": str(Path(__file__).parent / "recordings"),
    }


@pytest.fixture
def own_tabs(chrome: ChromeProcess) -> Iterator[None]:
    """Close the tabs a server subprocess opened in the shared session Chrome (a video in a
    forgotten tab would keep playing for the rest of the session)."""
    before = {t["id"] for t in _targets(chrome)}
    yield
    for target in _targets(chrome):
        if target["id"] not in before and target.get("type") == "page":
            close = f"{chrome.endpoint}/json/close/{target['id']}"
            with contextlib.suppress(OSError), urllib.request.urlopen(close, timeout=5):
                pass


def _targets(chrome: ChromeProcess) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{chrome.endpoint}/json/list", timeout=5) as reply:
        return list(json.load(reply))


@contextlib.asynccontextmanager
async def stdio_session(
    env: dict[str, str],
    cwd: Path,
    *args: str,
    greetings: list[types.InitializeResult] | None = None,
) -> AsyncIterator[ClientSession]:
    """`stream-browser mcp` as a host starts it; its stderr goes to cwd/mcp-stderr.log (the
    server's answer to `initialize` is added to `greetings`)."""
    params = StdioServerParameters(
        command=COMMAND,
        args=["--env-file", "/nonexistent/.env", "mcp", *args],
        env=env,
        cwd=str(cwd),
    )
    with (cwd / "mcp-stderr.log").open("a", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            greeting = await session.initialize()
            if greetings is not None:
                greetings.append(greeting)
            yield session


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def _log_events(cwd: Path) -> list[dict[str, Any]]:
    lines = (cwd / "mcp-stderr.log").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


# -- stdio, against the real command --------------------------------------------------------


def test_stdio_lists_six_tools_with_schemas_and_annotations(
    mcp_env: dict[str, str], tmp_path: Path
) -> None:
    async def scenario() -> types.ListToolsResult:
        async with stdio_session(mcp_env, tmp_path) as session:
            return await session.list_tools()

    listed = asyncio.run(scenario())
    tools = {tool.name: tool for tool in listed.tools}
    assert list(tools) == NAMES
    browse = tools["browse"]
    assert browse.inputSchema["required"] == ["query"]
    assert browse.inputSchema["properties"]["action"]["enum"] == ["auto", "search", "read"]
    assert browse.inputSchema["properties"]["broadcasting"]["type"] == "boolean"  # one type
    assert tools["play"].inputSchema["required"] == ["query"]
    assert tools["pause"].inputSchema["properties"] == {}
    for tool in listed.tools:
        assert tool.title and tool.description
        assert tool.outputSchema is not None and tool.outputSchema["type"] == "object"
        shapes = {ref["$ref"].rsplit("/", 1)[1] for ref in tool.outputSchema["anyOf"]}
        assert shapes == {"ToolExecutionResult", "ToolFailure"}  # the answer, or a tool error
        notes = tool.annotations
        assert notes is not None
        assert notes.openWorldHint is True and notes.destructiveHint is False
        assert notes.readOnlyHint is (tool.name == "status")
    assert browse.description is not None and tools["play"].description is not None
    assert "UNTRUSTED WEB EXTRACT" in browse.description
    assert "stream" in tools["play"].description


def test_stdio_server_info_names_the_installed_version(
    mcp_env: dict[str, str], tmp_path: Path
) -> None:
    greetings: list[types.InitializeResult] = []

    async def scenario() -> None:
        async with stdio_session(mcp_env, tmp_path, greetings=greetings) as session:
            await session.send_ping()

    asyncio.run(scenario())
    (greeting,) = greetings
    assert greeting.serverInfo.name == "stream-browser"
    assert greeting.serverInfo.version == importlib.metadata.version("stream-browser")


def test_stdio_browse_reads_a_local_page_through_the_real_chromium_fenced(
    mcp_env: dict[str, str], tmp_path: Path, http: LocalServer, own_tabs: None
) -> None:
    url = http.route("/harbour", Reply(ARTICLE))

    async def scenario() -> types.CallToolResult:
        async with stdio_session(mcp_env, tmp_path) as session:
            return await session.call_tool(
                "browse",
                {"query": "ferry times", "action": "read", "url": url, "broadcasting": True},
            )

    result = asyncio.run(scenario())
    assert not result.isError, _text(result)
    envelope = parse_envelope(_text(result))  # the text content is the fenced envelope
    assert "forty minutes" in envelope.body
    assert envelope.header["sources"] == url
    data = result.structuredContent
    assert data is not None
    assert data["provider"] == "read" and data["success"] is True
    assert [hop["provider"] for hop in data["chain"]] == ["read"]
    assert "/harbour" in http.requests  # Chromium really fetched it
    events = [e["event"] for e in _log_events(tmp_path)]  # logs on stderr, not in the protocol
    assert "mcp.stdio_ready" in events and "mcp.call" in events


def test_stdio_play_and_the_controls_drive_the_local_youtube_stand_in(
    mcp_env: dict[str, str], tmp_path: Path, own_tabs: None
) -> None:
    pinned = json.loads(
        (Path(__file__).parent / "recordings" / YOUTUBE_CASE / "expected.json").read_text()
    )
    expected = pinned["result"]["data"]

    async def scenario() -> dict[str, types.CallToolResult]:
        results = {}
        async with stdio_session(mcp_env, tmp_path, "--replay", YOUTUBE_CASE) as session:
            results["play"] = await session.call_tool("play", {"query": "как выбить душу моба"})
            for name in ("pause", "status", "resume", "stop"):
                results[name] = await session.call_tool(name, {})
        return results

    results = asyncio.run(scenario())
    for name, result in results.items():
        assert not result.isError, f"{name}: {_text(result)}"
    data = {name: result.structuredContent or {} for name, result in results.items()}
    assert data["play"]["provider"] == "youtube"
    assert data["play"]["data"]["video_id"] == expected["video_id"]
    assert data["play"]["data"]["playing"] is True
    assert "Now playing on the stream: Test Pattern Tone" in _text(results["play"])
    assert data["pause"]["data"]["playing"] is False
    assert data["status"]["data"]["video_id"] == expected["video_id"]
    assert data["status"]["data"]["playing"] is False
    assert data["resume"]["data"]["playing"] is True
    assert data["stop"]["data"]["video_id"] is None


def test_stdio_failing_providers_give_a_tool_error_with_each_failure_kind(
    mcp_env: dict[str, str], tmp_path: Path
) -> None:
    write_fake_gemini(tmp_path / "bin", "auth-exit-41")
    secret = "AIzaFAKEKEY-must-never-show-0123456789"
    env = {**mcp_env, "CDP_PORT": str(free_port()), "GEMINI_API_KEY": secret}  # Chrome "down"

    async def scenario() -> types.CallToolResult:
        async with stdio_session(env, tmp_path) as session:
            return await session.call_tool(
                "browse", {"query": "why is the sky blue", "broadcasting": True}
            )

    result = asyncio.run(scenario())
    assert result.isError
    text = _text(result)
    assert "failure_kind: cdp-unreachable" in text
    assert "stream-browser chrome" in text  # the fix
    assert "gemini: gemini-auth" in text
    data = result.structuredContent
    assert data is not None and data["failure_kind"] == "cdp-unreachable"
    assert [(h["provider"], h["failure_kind"]) for h in data["chain"]] == [
        ("google", "cdp-unreachable"),
        ("gemini", "gemini-auth"),
    ]
    assert secret not in text + json.dumps(data)
    assert secret not in (tmp_path / "mcp-stderr.log").read_text()


def test_stdio_refuses_a_metadata_address_before_anything_connects(
    mcp_env: dict[str, str], tmp_path: Path
) -> None:
    async def scenario() -> types.CallToolResult:
        async with stdio_session(mcp_env, tmp_path) as session:
            return await session.call_tool(
                "browse",
                {"query": "http://169.254.169.254/latest/meta-data/", "broadcasting": True},
            )

    result = asyncio.run(scenario())
    assert result.isError
    data = result.structuredContent
    assert data is not None and data["failure_kind"] == "blocked-url"
    assert [h["provider"] for h in data["chain"]] == ["policy"]  # no provider ran


def test_protocol_stdout_sends_stray_output_and_children_to_stderr(tmp_path: Path) -> None:
    code = (
        "import os\n"
        "from search.mcp import protocol_stdout\n"
        "with protocol_stdout() as out:\n"
        "    print('stray print')\n"
        "    os.system('echo child process')\n"
        "    out.write('frame\\n'); out.flush()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == "frame\n"
    assert "stray print" in done.stderr and "child process" in done.stderr


# -- in process, through the SDK's memory transport -----------------------------------------


def _fake_tool(tmp_path: Path, **behaviours: str) -> BrowseTool:
    from search import Registry

    registry = Registry()
    for name in ("google", "read", "youtube", "gemini", *behaviours.get("more", "").split()):
        registry.register(FakeProvider(name, behaviour=behaviours.get(name, "ok")))
    return BrowseTool(make_settings(None, tmp_path), registry=registry)


async def _call(server: Any, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    async with create_connected_server_and_client_session(server) as session:
        return await session.call_tool(name, arguments)


def test_a_call_that_never_returns_becomes_a_deadline_tool_error() -> None:
    async def hangs(
        query: str, *, action: str, url: str | None, ctx: ToolContext, **_: Any
    ) -> Walk:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    server = build_server(hangs, timeout_s=0.2)
    result = asyncio.run(_call(server, "browse", {"query": "anything"}))
    assert result.isError
    assert result.structuredContent is not None
    assert result.structuredContent["failure_kind"] == "deadline"


def test_a_crash_becomes_an_internal_error_tool_result_not_a_protocol_error() -> None:
    async def crashes(
        query: str, *, action: str, url: str | None, ctx: ToolContext, **_: Any
    ) -> Walk:
        raise RuntimeError("boom")

    result = asyncio.run(_call(build_server(crashes, timeout_s=5), "status", {}))
    assert result.isError
    assert "failure_kind: internal-error" in _text(result)
    assert "RuntimeError: boom" in _text(result)


def test_each_tool_passes_its_action_and_arguments_to_the_one_entry() -> None:
    seen: list[tuple[str, str, str | None, bool | None, str | None]] = []

    async def records(
        query: str, *, action: str, url: str | None, ctx: ToolContext, engine: str | None = None
    ) -> Walk:
        seen.append((query, action, url, ctx.broadcasting, engine))
        return Walk(None, [Hop(provider="fake", ok=False, elapsed_ms=1, failure_kind="no-video")])

    server = build_server(records, timeout_s=5)

    async def scenario() -> None:
        async with create_connected_server_and_client_session(server) as session:
            await session.call_tool(
                "browse", {"query": "q", "action": "read", "url": "https://a.example/"}
            )
            await session.call_tool("browse", {"query": "q2", "broadcasting": False})
            await session.call_tool("browse", {"query": "q3", "engine": "bing"})
            await session.call_tool("play", {"query": "lofi"})
            for name in ("pause", "resume", "stop", "status"):
                await session.call_tool(name, {})

    asyncio.run(scenario())
    assert seen == [
        ("q", "read", "https://a.example/", None, None),
        ("q2", "auto", None, False, None),
        ("q3", "auto", None, None, "bing"),
        ("lofi", "play", None, None, None),
        ("", "pause", None, None, None),
        ("", "resume", None, None, None),
        ("", "stop", None, None, None),
        ("", "status", None, None, None),
    ]


def test_a_bad_argument_is_a_tool_error_naming_it() -> None:
    async def never(
        query: str, *, action: str, url: str | None, ctx: ToolContext, **_: Any
    ) -> Walk:
        raise AssertionError("must not be called")

    result = asyncio.run(
        _call(build_server(never, timeout_s=5), "browse", {"query": "q", "action": "play"})
    )
    assert result.isError
    assert "argument `action`: 'play' is not one of" in _text(result)
    assert result.structuredContent is not None
    assert result.structuredContent["failure_kind"] == "bad-arguments"
    engine = asyncio.run(
        _call(build_server(never, timeout_s=5), "browse", {"query": "q", "engine": "yahoo"})
    )
    assert "argument `engine`: 'yahoo' is not one of ['google', 'bing']" in _text(engine)
    unknown = asyncio.run(_call(build_server(never, timeout_s=5), "dance", {}))
    assert unknown.isError and "call one of: browse, play" in _text(unknown)


def test_in_process_tool_answers_in_the_envelope_with_structured_data(tmp_path: Path) -> None:
    tool = _fake_tool(tmp_path, google="fail:captcha")
    server = build_server(tool.arun, timeout_s=_mcp.call_timeout_s(tool.settings))
    result = asyncio.run(_call(server, "browse", {"query": "sky colour", "broadcasting": True}))
    assert not result.isError
    assert "fake answer from gemini" in parse_envelope(_text(result)).body
    data = result.structuredContent
    assert data is not None and data["provider"] == "gemini"
    assert [(h["provider"], h["failure_kind"]) for h in data["chain"]] == [
        ("google", "captcha"),
        ("gemini", None),
    ]
    # an agent names the engine: that one alone searches on screen
    tool = _fake_tool(tmp_path, google="fail:captcha", more="bing")
    server = build_server(tool.arun, timeout_s=_mcp.call_timeout_s(tool.settings))
    bing = asyncio.run(
        _call(server, "browse", {"query": "sky colour", "broadcasting": True, "engine": "bing"})
    )
    assert bing.structuredContent is not None and bing.structuredContent["provider"] == "bing"


def test_every_declared_action_is_reachable_through_one_tool() -> None:
    assert [tool.name for tool in TOOLS] == NAMES
    browse_actions = set(TOOLS[0].input_schema["properties"]["action"]["enum"]) - {"auto"}
    own = {tool.action for tool in TOOLS if tool.action is not None}
    assert browse_actions | own == set(SPECS)
    assert not browse_actions & own
    for tool in TOOLS:
        needs_query = tool.action is None or SPECS[tool.action].needs_query
        assert ("query" in tool.input_schema.get("required", [])) is needs_query
    assert os.path.exists(COMMAND), "the console script is installed beside this Python"


# -- streamable HTTP, against a running service ---------------------------------------------


@pytest.fixture(scope="module")
def svc(chrome: ChromeProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProc]:
    state = tmp_path_factory.mktemp("mcp-service-state")
    service = start_service(chrome, state)
    yield service
    assert service.stop() == 0
    for file in state.glob("owned-tab-*.json"):
        target = json.loads(file.read_text()).get("target_id")
        if target:
            close_target(chrome.endpoint, target)


@contextlib.asynccontextmanager
async def http_session(
    service: ServiceProc,
    headers: dict[str, str],
    statuses: list[int] | None = None,
    greetings: list[types.InitializeResult] | None = None,
) -> AsyncIterator[ClientSession]:
    async def record(response: httpx.Response) -> None:
        if statuses is not None:
            statuses.append(response.status_code)

    hooks = {"response": [record]}
    async with (
        httpx.AsyncClient(headers=headers, timeout=60, event_hooks=hooks) as http_client,
        streamable_http_client(f"{service.url}/mcp", http_client=http_client) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        greeting = await session.initialize()
        if greetings is not None:
            greetings.append(greeting)
        yield session


def _bearer(service: ServiceProc) -> dict[str, str]:
    return {"Authorization": f"Bearer {service.token}"}


def _http_statuses(error: BaseException) -> list[int]:
    """The HTTP statuses inside an (exception group of) httpx errors."""
    if isinstance(error, BaseExceptionGroup):
        return [code for inner in error.exceptions for code in _http_statuses(inner)]
    if isinstance(error, httpx.HTTPStatusError):
        return [error.response.status_code]
    return []


def test_http_with_the_token_lists_the_tools_and_reads_a_page_through_the_service(
    svc: ServiceProc, http: LocalServer
) -> None:
    url = http.route("/harbour-http", Reply(ARTICLE))

    statuses: list[int] = []

    async def scenario() -> tuple[list[str], types.CallToolResult]:
        async with http_session(svc, _bearer(svc), statuses) as session:
            names = [tool.name for tool in (await session.list_tools()).tools]
            result = await session.call_tool(
                "browse", {"query": "ferry", "url": url, "broadcasting": True}
            )
            return names, result

    names, result = asyncio.run(scenario())
    assert names == NAMES
    assert set(statuses) <= {200, 202}, statuses  # answered at /mcp itself, no redirect
    assert not result.isError, _text(result)
    assert "forty minutes" in parse_envelope(_text(result)).body
    assert result.structuredContent is not None
    assert result.structuredContent["provider"] == "read"
    assert wait_until(lambda: any(e.get("action") == "auto" for e in svc.events("service.turn"))), (
        "the call went through the service's queue"
    )


def test_http_server_info_names_the_version_the_service_runs(svc: ServiceProc) -> None:
    greetings: list[types.InitializeResult] = []

    async def scenario() -> None:
        async with http_session(svc, _bearer(svc), greetings=greetings) as session:
            await session.send_ping()

    asyncio.run(scenario())
    (greeting,) = greetings
    assert greeting.serverInfo.name == "stream-browser"
    assert greeting.serverInfo.version == importlib.metadata.version("stream-browser")


def test_http_without_the_token_is_refused_with_401_before_any_tool_runs(
    svc: ServiceProc,
) -> None:
    async def scenario(headers: dict[str, str]) -> None:
        async with http_session(svc, headers) as session:
            await session.call_tool("status", {})

    for headers in ({}, {"Authorization": "Bearer not-the-token"}):
        with pytest.raises(BaseException) as info:
            asyncio.run(scenario(headers))
        assert _http_statuses(info.value) == [401]

    def refused() -> list[int]:
        return [e["status"] for e in svc.events("service.refused") if e.get("path") == "/mcp"]

    wait_until(lambda: len(refused()) >= 2)  # the service's log arrives through a pipe
    assert refused()[-2:] == [401, 401]


def test_http_a_request_from_a_web_page_is_refused_even_with_the_token(
    svc: ServiceProc,
) -> None:
    async def scenario() -> None:
        async with http_session(svc, {**_bearer(svc), "Origin": "https://evil.example"}):
            pass

    with pytest.raises(BaseException) as info:
        asyncio.run(scenario())
    assert _http_statuses(info.value) == [403]


def test_stdio_forwards_to_a_running_service_when_one_answers(
    svc: ServiceProc, mcp_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**mcp_env, "SB_SERVICE_URL": svc.url, "SB_SERVICE_TOKEN": svc.token}
    before = len(svc.events("service.turn"))

    async def scenario() -> types.CallToolResult:
        async with stdio_session(env, tmp_path) as session:
            return await session.call_tool("status", {})

    result = asyncio.run(scenario())
    assert not result.isError, _text(result)
    assert result.structuredContent is not None
    assert result.structuredContent["action"] == "status"
    wait_until(lambda: len(svc.events("service.turn")) > before)
    assert [e["action"] for e in svc.events("service.turn")[before:]] == ["status"]
    via = [e for e in _log_events(tmp_path) if e["event"] == "mcp.via"]
    assert via == [{**via[0], "via": "service", "url": svc.url}]
    assert svc.token not in (tmp_path / "mcp-stderr.log").read_text()


def test_stdio_via_service_with_a_wrong_token_gives_an_unauthorized_tool_error(
    svc: ServiceProc, mcp_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**mcp_env, "SB_SERVICE_URL": svc.url, "SB_SERVICE_TOKEN": "wrong-token"}

    async def scenario() -> types.CallToolResult:
        async with stdio_session(env, tmp_path, "--via", "service") as session:
            return await session.call_tool("status", {})

    result = asyncio.run(scenario())
    assert result.isError
    assert result.structuredContent is not None
    assert result.structuredContent["failure_kind"] == "unauthorized"
    assert "SB_SERVICE_TOKEN" in result.structuredContent["fix"]


def test_stdio_finds_the_service_from_its_settings_and_token_file(
    svc: ServiceProc, mcp_env: dict[str, str], tmp_path: Path
) -> None:
    port = svc.url.rsplit(":", 1)[1]
    env = {k: v for k, v in mcp_env.items() if k != "SB_SERVICE_URL"}
    env.update({"SB_SERVICE_PORT": port, "SB_STATE_DIR": str(svc.state_dir)})  # token file

    async def scenario() -> types.CallToolResult:
        async with stdio_session(env, tmp_path) as session:
            return await session.call_tool("status", {})

    result = asyncio.run(scenario())
    assert not result.isError, _text(result)
    via = [e for e in _log_events(tmp_path) if e["event"] == "mcp.via"]
    assert [(e["via"], e["url"]) for e in via] == [("service", svc.url)]


def test_a_full_service_queue_is_a_queue_full_tool_error_with_its_fix(tmp_path: Path) -> None:
    from search.service import CallQueue, Service

    tool = _fake_tool(tmp_path)
    service = Service(tool.settings, tool, CallQueue(max_waiting=0))  # every call is refused
    server = build_server(service.walk_or_refusal, timeout_s=5)
    result = asyncio.run(_call(server, "browse", {"query": "anything"}))
    assert result.isError
    assert result.structuredContent is not None
    assert result.structuredContent["failure_kind"] == "queue-full"
    assert "retry" in result.structuredContent["fix"]
    assert [h["provider"] for h in result.structuredContent["chain"]] == ["service"]


def test_http_a_caller_that_hangs_up_while_queued_is_skipped_like_a_browse_caller(
    svc: ServiceProc, http: LocalServer
) -> None:
    """docs/service.md: a caller that stopped waiting is skipped, its page never opened."""
    slow = http.route("/mcp-slow-first", Reply(ARTICLE, delay_s=3.0))
    never = http.route("/mcp-never-opened", Reply(ARTICLE))
    service = client.Service(svc.url, svc.token)
    first = threading.Thread(
        target=client.browse,
        args=("ferry",),
        kwargs={"url": slow, "broadcasting": True, "service_url": svc.url, "token": svc.token},
    )
    skipped_before = len(svc.events("service.skipped"))
    first.start()
    assert wait_until(lambda: any(p.startswith("/mcp-slow-first") for p in http.requests))
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "browse", "arguments": {"query": "ferry", "url": never}},
        }
    ).encode()
    host, port = svc.url.split("://", 1)[1].rsplit(":", 1)
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(
            (
                f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer "
                f"{svc.token}\r\nContent-Type: application/json\r\nAccept: application/json, "
                f"text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode()
            + body
        )
        assert wait_until(lambda: _waiting(service) == 1)
    # the MCP caller hung up while it waited behind the slow read
    first.join(30)
    assert wait_until(lambda: len(svc.events("service.skipped")) > skipped_before)
    time.sleep(0.5)
    assert not any(p.startswith("/mcp-never-opened") for p in http.requests)


def _waiting(service: client.Service) -> int:
    answer = client.request("GET", "/v1/status", service=service)
    assert answer is not None and isinstance(answer[1], dict)
    return int(answer[1]["queue"]["waiting"])
