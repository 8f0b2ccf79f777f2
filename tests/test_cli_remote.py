"""The CLI as a client of the service, its light start, and STREAM_BROWSER=false everywhere.

`stream-browser --help` and a command through the service import no playwright, trafilatura
or lxml; `--local` forces in-process; a dead `SB_SERVICE_URL` is an error that says what to
do; with the master flag off, commands that would drive the screen refuse and say why.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from browser_core import ChromeProcess, cdp_targets
from browser_core.chrome import free_port
from search.cli import COMMAND_MODULES, COMMANDS, main
from search.cli import _remote as _cli_remote
from search.cli._common import _Parser
from tests._server import LocalServer, Reply
from tests._service_proc import (  # noqa: F401 (shared_service is a fixture)
    ROOT,
    ServiceProc,
    clean_env,
    shared_service,
    wait_until,
)

NO_ENV = ["--env-file", "/nonexistent/.env"]
# What the remote path may load besides the standard library: its own modules, nothing else
# (no playwright, pydantic, structlog, lxml, trafilatura, dotenv without a dotenv file...).
REMOTE_MODULES = {
    "search",
    "search.cli",
    "search.cli._common",
    "search.cli._main",
    "search.cli._remote",
    "search.client",
}
# Standard-library modules the remote path does without: each costs milliseconds of every
# command's start (dataclasses brings inspect, ast and dis; argparse asks the terminal's width
# through shutil; importlib.metadata is the version's lookup, for --version alone).
SLOW_STDLIB = {"asyncio", "concurrent", "dataclasses", "importlib.metadata", "inspect", "shutil"}
_PROBE = """
import json, sys
before = set(sys.modules)
from search.cli import main  # what the console script runs
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
loaded = set(sys.modules) - before
ours = sorted(m for m in loaded if m.split('.')[0] == 'search')
foreign = sorted({m.split('.')[0] for m in loaded} - set(sys.stdlib_module_names) - {'search'})
stdlib = sorted(m for m in loaded if m in SLOW_STDLIB)
print(json.dumps({"code": code, "heavy": foreign, "ours": ours, "stdlib": stdlib}), file=sys.stderr)
""".replace("SLOW_STDLIB", repr(SLOW_STDLIB))


@pytest.fixture
def svc(shared_service: ServiceProc) -> ServiceProc:  # noqa: F811
    return shared_service


def _probe(argv: list[str], **env: str) -> tuple[dict[str, Any], str]:
    """Run the CLI in a fresh interpreter; (exit code and the modules it loaded, stdout)."""
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv],
        cwd=ROOT,
        env=clean_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(result.stderr.strip().splitlines()[-1])
    return report, result.stdout


def _registered() -> dict[str, tuple[str, str]]:
    found = {}
    for module in COMMAND_MODULES:
        sub = _Parser().add_subparsers(parser_class=_Parser)
        importlib.import_module(module).register(sub)
        for action in sub._choices_actions:
            found[action.dest] = (module, str(action.help))
    return found


def test_the_command_list_for_help_matches_what_the_modules_register() -> None:
    assert _registered() == COMMANDS, "update search.cli.COMMANDS to match the modules"


def test_help_imports_no_browser_dependency() -> None:
    report, out = _probe(["--help"])
    assert report["code"] == 0 and report["heavy"] == []
    assert "serve" in out and "search" in out


def test_the_remote_parser_takes_every_option_of_the_in_process_commands() -> None:
    local = _Parser().add_subparsers(parser_class=_Parser)
    importlib.import_module("search.cli._core").register(local)
    remote = _cli_remote.build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert isinstance(remote, dict)  # a subparsers action's choices: name -> parser
    for name in _cli_remote.REMOTE_COMMANDS:
        wanted = {o for a in local.choices[name]._actions for o in a.option_strings}
        taken = {o for a in remote[name]._actions for o in a.option_strings}
        missing = wanted - taken - set(_cli_remote.LOCAL_ONLY) - {"-h", "--help"}
        assert not missing, f"{name}: add {missing} to search.cli._remote.build_parser"


def test_read_through_the_service_answers_without_loading_the_browser_stack(
    svc: ServiceProc, http: LocalServer
) -> None:
    url = http.route("/cli-remote", Reply("<title>Remote</title><p>" + "Swifts sleep aloft. " * 40))
    report, out = _probe(  # no dotenv file: a developer's .env would load python-dotenv
        [*NO_ENV, "read", url, "--json"], SB_SERVICE_URL=svc.url, SB_SERVICE_TOKEN=svc.token
    )
    assert report["code"] == 0
    assert report["heavy"] == [], "the remote path loaded a third-party package"
    assert set(report["ours"]) <= REMOTE_MODULES, "the remote path loaded more of ours"
    assert report["stdlib"] == [], "the remote path loaded a slow standard-library module"
    data = json.loads(out)
    assert data["outcome"] == "ok" and "Swifts sleep aloft." in data["text"]  # `read --json`


def test_ask_through_the_service_prints_what_the_brain_gets(
    svc: ServiceProc, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SB_SERVICE_URL", svc.url)
    monkeypatch.setenv("SB_SERVICE_TOKEN", svc.token)
    turns = len(svc.events("service.turn"))
    code = main([*NO_ENV, "ask", "off air", "--broadcasting", "false", "--json"])
    answer = json.loads(capsys.readouterr().out)
    assert code == 1 and answer["ok"] is False and answer["result"] is None
    assert answer["chain"][0]["failure_kind"] == "gemini-cli-missing"
    # it went through the service (the event is written after the answer: wait for it)
    assert wait_until(lambda: len(svc.events("service.turn")) == turns + 1, timeout=5)


def test_local_runs_in_process_even_with_a_service(
    svc: ServiceProc,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SB_SERVICE_URL", svc.url)
    monkeypatch.setenv("SB_SERVICE_TOKEN", svc.token)
    monkeypatch.setenv("GEMINI_CLI", str(tmp_path / "none"))
    turns = len(svc.events("service.turn"))
    code = main([*NO_ENV, "ask", "off air", "--broadcasting", "false", "--local", "--json"])
    assert code == 1 and json.loads(capsys.readouterr().out)["result"] is None
    assert len(svc.events("service.turn")) == turns


def test_a_refusal_from_the_service_is_one_line_with_its_kind_and_fix(
    svc: ServiceProc, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SB_SERVICE_URL", svc.url)
    monkeypatch.setenv("SB_SERVICE_TOKEN", "not-the-token")
    assert main([*NO_ENV, "status"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("stream-browser: the service answered 401: ")
    assert "(unauthorized)" in err and "fix: " in err
    assert "{" not in err  # the error body read out, not printed as a dict


def test_a_named_service_that_is_down_is_an_error_saying_what_to_do(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SB_SERVICE_URL", f"http://127.0.0.1:{free_port()}")
    assert main([*NO_ENV, "status"]) == 1
    err = capsys.readouterr().err
    assert "stream-browser serve" in err and "--local" in err


def test_with_a_token_file_but_no_service_the_command_runs_in_process(
    chrome: ChromeProcess,
    http: LocalServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "service-token").write_text("stale-token\n")
    monkeypatch.delenv("SB_SERVICE_URL")
    monkeypatch.setenv("SB_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("SB_SERVICE_PORT", str(free_port()))  # nothing listens there
    monkeypatch.setenv("CDP_PORT", str(chrome.port))
    monkeypatch.setenv("SB_ALLOW_HOSTS", "127.0.0.1")
    url = http.route("/fallback-local", Reply("<p>" + "Rooks gather. " * 40))
    assert main([*NO_ENV, "read", url, "--json"]) == 0
    assert "Rooks gather." in json.loads(capsys.readouterr().out)["text"]


# -- STREAM_BROWSER=false ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv", [["play", "lofi"], ["search", "kestrel"], ["read", "https://example.org/"], ["pause"]]
)
def test_with_broadcasting_disabled_screen_commands_refuse_and_leave_the_tabs_alone(
    chrome: ChromeProcess,
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("STREAM_BROWSER", "false")
    monkeypatch.setenv("CDP_PORT", str(chrome.port))
    tabs = sorted(t["id"] for t in cdp_targets(chrome.endpoint))
    assert main([*NO_ENV, *argv]) == 1
    err = capsys.readouterr().err
    assert "STREAM_BROWSER=false" in err and "stream-browser ask" in err
    assert sorted(t["id"] for t in cdp_targets(chrome.endpoint)) == tabs


def test_with_broadcasting_disabled_chrome_needs_force(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STREAM_BROWSER", "false")
    monkeypatch.setenv("SB_STATE_DIR", str(tmp_path))
    port = free_port()
    assert main([*NO_ENV, "chrome", "--port", str(port), "--headless"]) == 1
    assert "--force" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.json"))  # nothing started, nothing remembered
