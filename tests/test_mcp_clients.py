"""The MCP faces against the clients hosts are built on, not the Python SDK alone: the
TypeScript SDK's own `Client` (under the MCP Inspector, the Gemini CLI and most desktop and
IDE hosts) over streamable HTTP with the token and over stdio, run with the Node this machine
has (`tests/mcp_ts_client.mjs`; `make tools` installs the SDK into `.tools/`).

What a user of such a host sees: the tools, a page read, and a failed call whose failure kind
and fix arrive as text (the TypeScript SDK throws instead when structured content does not
match the declared output schema, errors included).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_core import ChromeProcess
from gemini.testing import write_fake_gemini
from tests._server import LocalServer, Reply
from tests._service_proc import ROOT, ServiceProc, close_owned_tab, start_service

NODE = shutil.which("node")
SDK = ROOT / ".tools" / "node_modules" / "@modelcontextprotocol" / "sdk"
SCRIPT = Path(__file__).with_name("mcp_ts_client.mjs")
COMMAND = str(Path(sys.executable).parent / "stream-browser")
NAMES = ["browse", "play", "pause", "resume", "stop", "status"]
ARTICLE = (
    "<html><head><title>Harbour news</title></head><body><article><h1>Harbour news</h1>"
    + "<p>The ferry to the islands now leaves every forty minutes in winter.</p>" * 6
    + "</article></body></html>"
)

pytestmark = pytest.mark.skipif(
    NODE is None or not SDK.is_dir(),
    reason="needs node and the TypeScript MCP SDK in .tools (run `make tools`)",
)


@pytest.fixture(scope="module")
def svc(chrome: ChromeProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProc]:
    state = tmp_path_factory.mktemp("ts-client-service")
    service = start_service(chrome, state)
    yield service
    assert service.stop() == 0
    close_owned_tab(chrome, state)


def run_ts_client(plan: dict[str, Any], timeout: float = 90) -> dict[str, Any]:
    assert NODE is not None
    done = subprocess.run(
        [NODE, str(SCRIPT), str(SDK), json.dumps(plan)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _calls(page: str) -> list[list[Any]]:
    return [
        ["browse", {"query": "ferry", "url": page, "broadcasting": True}],
        ["browse", {"query": "ferry", "action": "dance"}],  # not one of auto, search, read
        ["play", {"query": "lofi", "broadcasting": True}],  # play takes no `broadcasting`
    ]


def _assert_seen(out: dict[str, Any]) -> None:
    assert "connectError" not in out, out
    assert out["tools"] == NAMES
    read, bad_action, bad_argument = out["calls"]
    for call in out["calls"]:
        assert "thrown" not in call, call  # the SDK accepted every result
    assert read["isError"] is False, read["text"]
    assert "forty minutes" in read["text"] and "<<<UNTRUSTED_WEB_EXTRACT" in read["text"]
    assert read["structured"]["provider"] == "read"
    for failed in (bad_action, bad_argument):
        assert failed["isError"] is True
        assert "failure_kind: bad-arguments" in failed["text"]
        assert "fix: " in failed["text"]
        assert failed["structured"]["failure_kind"] == "bad-arguments"
    assert "action" in bad_action["text"] and "broadcasting" in bad_argument["text"]


def test_the_typescript_sdk_client_over_http_with_the_token_lists_reads_and_sees_errors(
    svc: ServiceProc, http: LocalServer
) -> None:
    page = http.route("/harbour-ts-http", Reply(ARTICLE))
    plan = {"transport": "http", "url": f"{svc.url}/mcp", "token": svc.token}
    _assert_seen(run_ts_client({**plan, "calls": _calls(page)}))


def test_the_typescript_sdk_client_with_a_wrong_token_is_told_why_and_how_to_fix_it(
    svc: ServiceProc,
) -> None:
    plan = {"transport": "http", "url": f"{svc.url}/mcp", "token": "not-the-token", "calls": []}
    out = run_ts_client(plan)
    # what the host shows: the service's error body, its kind and how to fix it
    assert '"kind":"unauthorized"' in out["connectError"]
    assert "SB_SERVICE_TOKEN" in out["connectError"]


def test_the_typescript_sdk_client_over_stdio_lists_reads_and_sees_errors(
    chrome: ChromeProcess, http: LocalServer, tmp_path: Path
) -> None:
    page = http.route("/harbour-ts-stdio", Reply(ARTICLE))
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "CDP_PORT": str(chrome.port),
        "GEMINI_CLI": str(write_fake_gemini(tmp_path / "bin", "success")),
        "SB_STATE_DIR": str(tmp_path / "state"),
        "SB_ALLOW_HOSTS": "127.0.0.1",
        "SB_CACHE_TTL_S": "0",
        "SB_SETTLE_MS": "200",
        "SB_SERVICE_URL": "off",
    }
    plan = {
        "transport": "stdio",
        "command": COMMAND,
        "args": ["--env-file", "/nonexistent/.env", "mcp"],
        "env": env,
        "cwd": str(tmp_path),
        "calls": _calls(page),
    }
    try:
        _assert_seen(run_ts_client(plan))
    finally:
        close_owned_tab(chrome, tmp_path / "state")
