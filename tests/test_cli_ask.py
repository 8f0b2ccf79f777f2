"""`stream-browser ask` end to end: the real browser path, the Gemini fake, the exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from browser_core import ChromeProcess, parse_envelope
from browser_core.chrome import free_port
from gemini.testing import write_fake_gemini
from search.cli import main
from tests._server import LocalServer, Reply

NO_ENV = ["--env-file", "/nonexistent/.env"]
ARTICLE = (
    "<html><head><title>Harbour news</title></head><body><article><h1>Harbour news</h1>"
    + "<p>The ferry to the islands now leaves every forty minutes in winter.</p>" * 6
    + "</article></body></html>"
)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake `gemini` that answers, found through GEMINI_CLI; state in a temp folder."""
    fake = write_fake_gemini(tmp_path / "bin", "success")
    monkeypatch.setenv("GEMINI_CLI", str(fake))
    monkeypatch.setenv("SB_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("SB_ALLOW_HOSTS", "127.0.0.1")
    monkeypatch.setenv("SB_CACHE_TTL_S", "0")
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def ask(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict, str]:
    code = main([*NO_ENV, "ask", *args, "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def test_live_read_is_answered_by_the_browser_in_an_envelope(
    env: Path,
    chrome: ChromeProcess,
    http: LocalServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CDP_PORT", str(chrome.port))
    url = http.route("/harbour", Reply(ARTICLE))
    code, data, _ = ask(capsys, "ferry times", "--url", url, "--broadcasting", "true")
    assert code == 0
    assert data["result"]["provider"] == "read"
    assert [hop["provider"] for hop in data["chain"]] == ["read"]
    envelope = parse_envelope(data["result"]["reply_text"])
    assert "forty minutes" in envelope.body
    assert envelope.header["sources"] == url


def test_when_chrome_is_gone_the_chain_falls_through_to_gemini(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CDP_PORT", str(free_port()))
    code, data, _ = ask(capsys, "why is the sky blue", "--broadcasting", "true")
    assert code == 0
    chain = data["chain"]
    assert [(h["provider"], h["ok"], h["failure_kind"]) for h in chain] == [
        ("google", False, "cdp-unreachable"),
        ("gemini", True, None),
    ]
    body = parse_envelope(data["result"]["reply_text"]).body
    assert "Rayleigh" in body


def test_broadcast_off_uses_gemini_without_touching_the_screen(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CDP_PORT", str(free_port()))
    code, data, _ = ask(capsys, "why is the sky blue", "--broadcasting", "false")
    assert code == 0
    assert [h["provider"] for h in data["chain"]] == ["gemini"]


def test_all_failing_exits_1_like_the_brains_none(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CDP_PORT", str(free_port()))
    write_fake_gemini(env / "bin", "auth-exit-41")
    code, data, err = ask(capsys, "why is the sky blue", "--broadcasting", "true")
    assert code == 1
    assert data["ok"] is False and data["result"] is None
    assert [h["failure_kind"] for h in data["chain"]] == ["cdp-unreachable", "gemini-auth"]
    assert "every provider failed" in err


def test_play_is_refused_when_broadcasting_is_disabled(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STREAM_BROWSER", "false")
    code, data, _ = ask(capsys, "lofi radio", "--action", "play")
    assert code == 1
    assert "Broadcasting is disabled" in data["result"]["reply_text"]
    assert data["chain"] == []


def test_bad_usage_exits_2(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([*NO_ENV, "ask", "q", "--action", "dance"])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main([*NO_ENV, "ask", "q", "--broadcasting", "maybe"])
    assert info.value.code == 2
