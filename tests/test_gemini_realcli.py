"""The real @google/gemini-cli (from npm) accepts our exact argv and environment and, with
no login, fails fast as gemini-auth. It never gets far enough to use the network."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

import gemini
from browser_core import build_settings
from gemini._cli import PROJECT_ROOT
from gemini._sync import run_sync

pytestmark = [pytest.mark.realcli, pytest.mark.slow]

LOCAL_BIN = PROJECT_ROOT / ".tools" / "node_modules" / ".bin" / "gemini"
INSTALL = (
    "npm install --no-audit --no-fund --prefix .tools @google/gemini-cli@0.61.0 "
    "(the Makefile's install target does this)"
)


def real_gemini() -> Path:
    if LOCAL_BIN.is_file():
        return LOCAL_BIN
    found = shutil.which("gemini")
    if found is None:
        pytest.skip(f"the real Gemini CLI is not installed: {INSTALL}")
    return Path(found)


@pytest.fixture
def empty_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HOME/GEMINI_CLI_HOME, plus the traps our env must defuse: a display
    (the CLI would wait on a [Y/n] login prompt) and an API key (it would use it)."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the Gemini CLI needs Node.js 20+")
    for name in list(os.environ):
        if name.startswith(("GEMINI_", "GOOGLE_")) or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (tmp_path / "systmp").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-not-a-real-key")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "systmp"))
    return home


@pytest.mark.parametrize("query", ["why is the sky blue?", "--help"])
def test_real_cli_without_login_fails_fast_as_gemini_auth(empty_home: Path, query: str) -> None:
    settings = build_settings(
        gemini_cli=str(real_gemini()),
        gemini_timeout_s=30,
        gemini_oauth_dir=str(empty_home / ".gemini"),
    )
    assert not gemini.gemini_oauth_ready(settings)
    started = time.monotonic()
    with pytest.raises(gemini.GeminiAuthError) as info:
        run_sync(gemini.ask_cli(query, settings))
    elapsed = time.monotonic() - started
    assert elapsed < 15, f"took {elapsed:.1f} s: the CLI waited for something"
    assert info.value.context.get("exit_code") == 41
    assert "GEMINI_OAUTH_DIR" in (info.value.hint or "")
    assert not (empty_home / ".gemini" / "oauth_creds.json").exists()


def test_real_cli_failure_returns_none_from_cli_search(empty_home: Path) -> None:
    settings = build_settings(
        gemini_cli=str(real_gemini()), gemini_oauth_dir=str(empty_home / ".gemini")
    )
    assert gemini.cli_search("hello", settings) is None
