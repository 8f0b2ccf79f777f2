"""Every MCP host snippet in docs/mcp.md and README.md, read out of the file and run as a user
would: the stdio and HTTP `mcpServers` entries (and README's one-line forms of them) with
the TypeScript SDK's own client, the Gemini CLI's `settings.json` with the real `gemini mcp
list` (it needs no model login; tests/test_mcp_gemini_host.py makes it call a tool), the
MCP Inspector CLI commands and the `claude mcp add` line with the real Claude Code (its
`mcp add` and `mcp list` need no login). Only the paths, the port and the token are filled in.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_core import ChromeProcess
from tests._server import LocalServer, Reply
from tests._service_proc import ROOT, ServiceProc, close_owned_tab, start_service
from tests.test_mcp_clients import ARTICLE, NAMES, NODE, SDK, run_ts_client

DOC = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMAND = str(Path(sys.executable).parent / "stream-browser")
BIN = ROOT / ".tools" / "node_modules" / ".bin"
NODE22_BIN = ROOT / ".tools" / "node22" / "node_modules" / ".bin"  # make tools
CLAUDE = ROOT / ".tools" / "claude" / "node_modules" / ".bin" / "claude"  # make tools
PLACEHOLDER_COMMAND = "/path/to/stream-browser/.venv/bin/stream-browser"
BAD_CALL = ["browse", {"query": "ferry", "action": "dance"}]


def _json_blocks() -> list[dict[str, Any]]:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", DOC, re.DOTALL)]


def _snippet(kind: str) -> dict[str, Any]:
    """The documented `mcpServers` block of one host family."""
    for block in _json_blocks():
        servers = list(block.get("mcpServers", {}).values())
        if kind == "gemini" and any("httpUrl" in s for s in servers):
            return block
        if kind == "http" and servers and servers[0].get("type") == "http":
            return block
        if kind == "stdio" and len(servers) == 1 and "command" in servers[0]:
            return block
    raise AssertionError(f"docs/mcp.md has no {kind} snippet")


def _readme_entries() -> dict[str, dict[str, Any]]:
    """README's inline `mcpServers` entries (its "From an MCP host" section), by transport."""
    section = README.split("### From an MCP host", 1)[1].split("\n## ", 1)[0]
    entries = [json.loads(span) for span in re.findall(r"`(\{.*?\})`", section, re.DOTALL)]
    by_kind = {("http" if "url" in entry else "stdio"): entry for entry in entries}
    assert len(entries) == len(by_kind) == 2, entries
    return by_kind


@pytest.fixture(scope="module")
def svc(chrome: ChromeProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProc]:
    state = tmp_path_factory.mktemp("hosts-service")
    service = start_service(chrome, state)
    yield service
    assert service.stop() == 0
    close_owned_tab(chrome, state)


def _fill(block: dict[str, Any], svc: ServiceProc, chrome: ChromeProcess, home: Path) -> Any:
    """The snippet with this test's paths, port and token (nothing else changed)."""
    text = json.dumps(block)
    text = text.replace(PLACEHOLDER_COMMAND, COMMAND)
    text = text.replace("http://127.0.0.1:8765", svc.url).replace("PASTE-THE-TOKEN", svc.token)
    filled = json.loads(text)
    for server in filled["mcpServers"].values():
        if "command" in server:  # the environment a host gives the server
            server["env"] = {
                **server.get("env", {}),
                "CDP_PORT": str(chrome.port),
                "SB_STATE_DIR": str(home / "state"),
                "SB_SERVICE_URL": "off",
                "SB_ALLOW_HOSTS": "127.0.0.1",  # the test's own pages are on loopback
                "GEMINI_CLI": str(home / "no-gemini"),
                "HOME": str(home),
            }
    return filled


def _read_args(http: LocalServer, path: str) -> list[str]:
    """Inspector `--tool-arg`s reading a local page on the broadcast (values are parsed as JSON)."""
    page = http.route(path, Reply(ARTICLE))
    return ["--tool-arg", f"url={page}", "--tool-arg", "broadcasting=true"]


def _assert_read(result: dict[str, Any]) -> None:
    text = result["content"][0]["text"]
    assert result.get("isError") is not True, text
    assert "forty minutes" in text and "<<<UNTRUSTED_WEB_EXTRACT" in text, text


def _assert_error_text(text: str) -> None:
    assert "failure_kind: bad-arguments" in text and "fix: " in text, text


needs_sdk = pytest.mark.skipif(
    NODE is None or not SDK.is_dir(), reason="needs node and .tools (run `make tools`)"
)


@needs_sdk
def test_the_documented_stdio_entry_works_with_the_typescript_sdk(
    svc: ServiceProc, chrome: ChromeProcess, tmp_path: Path
) -> None:
    entry = _fill(_snippet("stdio"), svc, chrome, tmp_path)["mcpServers"]["stream-browser"]
    plan = {"transport": "stdio", "cwd": str(tmp_path), "calls": [BAD_CALL], **entry}
    out = run_ts_client(plan)
    assert out["tools"] == NAMES, out
    assert out["calls"][0]["isError"] is True
    _assert_error_text(out["calls"][0]["text"])


@needs_sdk
def test_the_documented_http_entry_works_with_the_typescript_sdk(
    svc: ServiceProc, chrome: ChromeProcess, tmp_path: Path
) -> None:
    entry = _fill(_snippet("http"), svc, chrome, tmp_path)["mcpServers"]["stream-browser"]
    _assert_entry_answers("http", entry, tmp_path)


@needs_sdk
@pytest.mark.parametrize("kind", ["stdio", "http"])
def test_the_readme_one_line_entries_work_with_the_typescript_sdk(
    kind: str, svc: ServiceProc, chrome: ChromeProcess, tmp_path: Path
) -> None:
    block = {"mcpServers": {"stream-browser": _readme_entries()[kind]}}
    entry = _fill(block, svc, chrome, tmp_path)["mcpServers"]["stream-browser"]
    _assert_entry_answers(kind, entry, tmp_path)


def _assert_entry_answers(kind: str, entry: dict[str, Any], cwd: Path) -> None:
    """The TypeScript SDK, configured from `entry`, lists the tools, sees a bad call's kind
    and fix, and gets the status."""
    if kind == "stdio":
        plan = {"transport": "stdio", "cwd": str(cwd), **entry}
    else:
        assert entry["type"] == "http"
        plan = {"transport": "http", "url": entry["url"], "headers": entry["headers"]}
    out = run_ts_client({**plan, "calls": [BAD_CALL, ["status", {}]]})
    assert out["tools"] == NAMES, out
    _assert_error_text(out["calls"][0]["text"])
    assert out["calls"][1]["isError"] is False, out["calls"][1]


def _claude(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"  # no update check, no telemetry
    return subprocess.run(
        [str(CLAUDE), *args],
        cwd=home / "work",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.skipif(
    not CLAUDE.exists(),
    reason="Claude Code is not in .tools/claude: `make tools` installs it (npm failed?)",
)
def test_the_documented_claude_mcp_add_line_writes_the_http_entry_and_connects(
    svc: ServiceProc, chrome: ChromeProcess, tmp_path: Path
) -> None:
    found = re.search(r"`(claude mcp add .*?)`", DOC, re.DOTALL)
    assert found is not None, "docs/mcp.md has no `claude mcp add` line"
    text = found.group(1).replace("http://127.0.0.1:8765", svc.url)
    argv = shlex.split(text.replace("PASTE-THE-TOKEN", svc.token))[1:]
    (tmp_path / "work").mkdir()
    added = _claude(tmp_path, *argv)
    assert added.returncode == 0, added.stdout + added.stderr
    assert svc.token not in added.stdout + added.stderr  # it prints the header redacted
    config = json.loads((tmp_path / ".claude.json").read_text())
    written = config["projects"][str(tmp_path / "work")]["mcpServers"]["stream-browser"]
    documented = _fill(_snippet("http"), svc, chrome, tmp_path)
    assert written == documented["mcpServers"]["stream-browser"]  # "writes it": the same entry
    listed = _claude(tmp_path, "mcp", "list")
    line = next((ln for ln in listed.stdout.splitlines() if "stream-browser:" in ln), "")
    assert line.endswith("✔ Connected") and "HTTP" in line, listed.stdout + listed.stderr
    assert _claude(tmp_path, "mcp", "remove", "stream-browser").returncode == 0
    assert _claude(tmp_path, *[a.replace(svc.token, "not-the-token") for a in argv]).returncode == 0
    wrong = _claude(tmp_path, "mcp", "list").stdout
    assert "stream-browser:" in wrong and "Failed to connect" in wrong, wrong


def _gemini_list(home: Path, trusted: bool) -> str:
    env = {"PATH": f"{Path(NODE or '/usr/bin/node').parent}:/usr/bin:/bin", "HOME": str(home)}
    env["NO_BROWSER"] = "true"
    if trusted:
        env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
    work = home / "work"
    work.mkdir(exist_ok=True)
    done = subprocess.run(
        [str(BIN / "gemini"), "mcp", "list"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=150,
    )
    return done.stdout + done.stderr


@pytest.mark.skipif(not (BIN / "gemini").exists(), reason="the Gemini CLI is not in .tools")
@pytest.mark.slow
def test_the_documented_gemini_settings_connect_both_servers_once_the_folder_is_trusted(
    svc: ServiceProc, chrome: ChromeProcess, tmp_path: Path
) -> None:
    settings = _fill(_snippet("gemini"), svc, chrome, tmp_path)
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "settings.json").write_text(json.dumps(settings))
    shown = _gemini_list(tmp_path, trusted=True)
    lines = {
        name: line
        for line in shown.splitlines()
        for name in settings["mcpServers"]
        if f" {name}:" in line
    }
    assert set(lines) == {"stream-browser", "stream-browser-http"}, shown
    for name, line in lines.items():
        assert line.rstrip().endswith("Connected"), (name, shown)
    untrusted = _gemini_list(tmp_path, trusted=False)
    assert "Connected" not in untrusted and "isabled" in untrusted, untrusted


@pytest.mark.skipif(not (BIN / "mcp-inspector").exists(), reason="the Inspector is not in .tools")
@pytest.mark.slow
def test_the_documented_inspector_cli_command_lists_reads_and_shows_a_failure(
    svc: ServiceProc, chrome: ChromeProcess, http: LocalServer, tmp_path: Path
) -> None:
    command = re.search(r"```sh\n(npx @modelcontextprotocol/inspector --cli .*?)\n```", DOC)
    assert command is not None, "docs/mcp.md has no Inspector CLI command"
    argv = shlex.split(command.group(1))
    argv = [str(BIN / "mcp-inspector"), *argv[2:]]  # npx PACKAGE -> the installed binary
    config = _fill(_snippet("stdio"), svc, chrome, tmp_path)
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    env = {"PATH": f"{Path(NODE or '/usr/bin/node').parent}:/usr/bin:/bin", "HOME": str(tmp_path)}

    def run(*args: str) -> Any:
        done = subprocess.run(
            args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr[-1500:]
        return json.loads(done.stdout)

    listed = run(*argv)
    assert [tool["name"] for tool in listed["tools"]] == NAMES
    method = argv.index("tools/list")
    call = ["tools/call", "--tool-name", "browse", "--tool-arg", "query=ferry"]
    read = run(*argv[:method], *call, *_read_args(http, "/harbour-inspector"), *argv[method + 1 :])
    close_owned_tab(chrome, tmp_path / "state")
    _assert_read(read)
    failed = run(*argv[:method], *call, "--tool-arg", "action=dance", *argv[method + 1 :])
    assert failed["isError"] is True
    _assert_error_text(failed["content"][0]["text"])


@pytest.mark.skipif(
    not (NODE22_BIN / "mcp-inspector").exists(),
    reason="Inspector 2.x needs Node 22 in .tools/node22: `make tools` installs both (npm failed?)",
)
def test_the_documented_inspector_2_command_over_http_lists_reads_and_shows_failures(
    svc: ServiceProc, http: LocalServer, tmp_path: Path
) -> None:
    found = re.search(r"```sh\n(npx @modelcontextprotocol/inspector@2 --cli .*?)\n```", DOC)
    assert found is not None, "docs/mcp.md has no Inspector 2.x command"
    text = found.group(1).replace("http://127.0.0.1:8765", svc.url)
    argv = [str(NODE22_BIN / "mcp-inspector"), *shlex.split(text)[2:]]
    env = {"PATH": f"{NODE22_BIN}:/usr/bin:/bin", "HOME": str(tmp_path)}

    def run(args: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            args, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
        )

    listed = run([a.replace("PASTE-THE-TOKEN", svc.token) for a in argv])
    assert listed.returncode == 0, listed.stderr[-1500:]
    assert [tool["name"] for tool in json.loads(listed.stdout)["tools"]] == NAMES
    method = argv.index("tools/list")
    call = ["tools/call", "--tool-name", "browse", "--tool-arg", "query=ferry"]
    with_token = [a.replace("PASTE-THE-TOKEN", svc.token) for a in argv[:method]]
    read = run([*with_token, *call, *_read_args(http, "/harbour-inspector2"), *argv[method + 1 :]])
    assert read.returncode == 0, read.stderr[-1500:]
    _assert_read(json.loads(read.stdout))
    failed = run([*with_token, *call, "--tool-arg", "action=dance", *argv[method + 1 :]])
    _assert_error_text(json.loads(failed.stdout)["content"][0]["text"])
    wrong = run([a.replace("PASTE-THE-TOKEN", "not-the-token") for a in argv])
    assert wrong.returncode != 0
    assert "unauthorized" in wrong.stderr and "SB_SERVICE_TOKEN" in wrong.stderr
