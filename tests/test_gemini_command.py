"""`stream-browser gemini ...` (search/cli/_gemini.py) end to end through search.cli.main."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

import search.cli._main
from gemini.testing import FakeGeminiApi, fake_calls, write_fake_gemini

KEY = "AIzaSy-command-test-key-0000"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith(("GEMINI_", "GOOGLE_", "SB_")) or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    for folder in ("home", "systmp", "bin", "cwd"):
        (tmp_path / folder).mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("SB_LOG_FORMAT", "json")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "systmp"))
    monkeypatch.chdir(tmp_path / "cwd")  # no .env is read from the project
    monkeypatch.setattr(search.cli._main, "COMMAND_MODULES", ("search.cli._gemini",))


def run(*argv: str) -> int:
    return search.cli._main.main(["gemini", *argv])


def test_prints_the_answer_with_sources_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_fake_gemini(tmp_path / "bin")
    assert run("why", "is", "the", "sky", "blue?") == 0
    out = capsys.readouterr().out
    assert "Rayleigh scattering" in out and "Sources:\n[1] en.wikipedia.org" in out
    assert fake_calls(tmp_path / "bin")[0]["argv"][:2] == ["-p", "why is the sky blue?"]


def test_json_prints_the_tool_execution_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_fake_gemini(tmp_path / "bin")
    assert run("--json", "why is the sky blue?") == 0
    result = json.loads(capsys.readouterr().out)
    assert result["success"] is True and result["provider"] == "gemini-cli"
    assert "UNTRUSTED_WEB_EXTRACT" in result["reply_text"]


def test_failure_prints_kind_message_and_hint_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_fake_gemini(tmp_path / "bin", "auth-exit-41")
    assert run("hello") == 1
    err = capsys.readouterr().err
    assert "gemini failed: gemini-auth: " in err and "GEMINI_OAUTH_DIR" in err


def test_missing_cli_prints_the_install_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("hello") == 1
    assert "gemini failed: gemini-cli-missing: " in capsys.readouterr().err


def test_auth_apikey_overrides_gemini_auth_and_uses_rest(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeGeminiApi({"gemini-2.5-flash": "grounded"}) as api:
        monkeypatch.setenv("GEMINI_API_BASE", api.base_url)
        monkeypatch.setenv("GEMINI_API_KEY", KEY)
        assert run("--auth", "apikey", "warum blau?") == 0
    captured = capsys.readouterr()
    assert "(Rayleigh-Streuung).[1][2]" in captured.out
    assert KEY not in captured.out + captured.err
    assert len(api.requests) == 1


def test_apikey_without_a_key_fails_as_gemini_auth(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("--auth", "apikey", "hello") == 1
    assert "gemini failed: gemini-auth: " in capsys.readouterr().err


def test_a_dash_query_after_double_dash_reaches_the_cli_as_the_prompt(tmp_path: Path) -> None:
    write_fake_gemini(tmp_path / "bin")
    assert run("--", "--help") == 0
    assert fake_calls(tmp_path / "bin")[0]["argv"][0] == "--prompt=--help"
