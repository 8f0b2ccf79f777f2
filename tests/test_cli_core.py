"""The CLI for people: doctor in both states, chrome start/stop, read, exit codes."""

from __future__ import annotations

import importlib.metadata
import json
import platform
import sys
from pathlib import Path

import pytest

from browser_core import ChromeProcess, cdp_version
from browser_core.chrome import free_port
from gemini.testing import write_fake_gemini
from search.cli import main
from tests._server import LocalServer, Reply

NO_ENV = ["--env-file", "/nonexistent/.env"]


def test_doctor_says_ready_when_chrome_and_the_gemini_login_are_there(
    chrome: ChromeProcess,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake = write_fake_gemini(tmp_path / "bin", "success")
    login = tmp_path / "oauth" / ".gemini"
    login.mkdir(parents=True)
    (login / "oauth_creds.json").write_text("{}")
    monkeypatch.setenv("CDP_PORT", str(chrome.port))
    monkeypatch.setenv("GEMINI_CLI", str(fake))
    monkeypatch.setenv("GEMINI_OAUTH_DIR", str(login))
    assert main([*NO_ENV, "doctor"]) == 0
    out = capsys.readouterr().out
    assert "OK   broadcast Chrome: " in out and "tab(s)" in out
    assert "OK   Gemini CLI" in out and "OK   Gemini login: seeded" in out
    assert "FAIL Gemini API key" in out  # reported, but not needed in oauth mode
    assert "ready: the configured mode" in out


def test_doctor_lists_each_failure_with_its_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CDP_PORT", str(free_port()))
    monkeypatch.setenv("GEMINI_CLI", str(tmp_path / "missing" / "gemini"))
    monkeypatch.setenv("GEMINI_OAUTH_DIR", str(tmp_path / "no-login"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main([*NO_ENV, "doctor"]) == 1
    out = capsys.readouterr().out
    assert "FAIL broadcast Chrome: nothing answers" in out
    assert "fix: start it with `stream-browser chrome`" in out
    assert "FAIL Gemini CLI: not found" in out and "npm i -g @google/gemini-cli" in out
    assert "not ready" in out


def test_doctor_opens_with_the_version_and_the_python_for_a_bug_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CDP_PORT", str(free_port()))
    monkeypatch.setenv("GEMINI_CLI", str(tmp_path / "missing" / "gemini"))
    main([*NO_ENV, "doctor"])
    first = capsys.readouterr().out.splitlines()[0]
    version = importlib.metadata.version("stream-browser")
    assert (
        first == f"stream-browser {version} (Python {platform.python_version()}, {sys.executable})"
    )


def test_doctor_in_apikey_mode_needs_the_key_and_never_prints_it(
    chrome: ChromeProcess,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CDP_PORT", str(chrome.port))
    monkeypatch.setenv("GEMINI_AUTH", "apikey")
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-secret-value-123")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main([*NO_ENV, "doctor"]) == 0
    captured = capsys.readouterr()
    assert "OK   Gemini API key: present" in captured.out
    assert "AIza-secret-value-123" not in captured.out + captured.err


def test_chrome_starts_a_local_broadcast_chrome_and_stops_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()
    monkeypatch.setenv("SB_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("SB_CHROME_PROFILE", str(tmp_path / "profile"))
    assert main([*NO_ENV, "chrome", "--port", str(port), "--headless"]) == 0
    try:
        assert "Chrome" in cdp_version(f"http://127.0.0.1:{port}")["Browser"]
        assert main([*NO_ENV, "chrome", "--port", str(port), "--headless"]) == 0
        assert "already running" in capsys.readouterr().out
    finally:
        assert main([*NO_ENV, "chrome", "--port", str(port), "--stop"]) == 0
    assert main([*NO_ENV, "chrome", "--port", str(port), "--stop"]) == 1


def test_read_prints_page_text_as_json(
    chrome: ChromeProcess,
    http: LocalServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CDP_PORT", str(chrome.port))
    monkeypatch.setenv("SB_ALLOW_HOSTS", "127.0.0.1")
    monkeypatch.setenv("SB_STATE_DIR", str(tmp_path / "state"))
    url = http.route(
        "/article",
        Reply(
            "<html><head><title>Local news</title></head><body><article><h1>Local news</h1>"
            + "<p>The river festival opens on Saturday with boats and music.</p>" * 8
            + "</article></body></html>"
        ),
    )
    assert main([*NO_ENV, "read", url, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == 200 and data["outcome"] == "ok"
    assert "river festival" in data["text"]
    missing = http.route("/gone", Reply("<h1>Not here</h1>", status=404))
    assert main([*NO_ENV, "read", missing, "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["outcome"] == "http-error"


def test_read_refuses_a_local_file_with_a_clear_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CDP_PORT", str(free_port()))
    assert main([*NO_ENV, "read", "file:///etc/passwd"]) == 1
    err = capsys.readouterr().err
    assert "blocked-url" in err and "only http and https" in err


def test_bad_usage_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["search"])
    assert info.value.code == 2
    assert "the following arguments are required: query" in capsys.readouterr().err
