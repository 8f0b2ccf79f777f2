"""Settings: the brain's variable names, defaults from playwright.config.toml, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from browser_core import SettingsError, build_settings, load_settings
from search.cli import main


def test_defaults_match_the_seed_behaviour() -> None:
    settings = build_settings()
    assert settings.stream_browser is True
    assert settings.cdp_endpoint == "http://127.0.0.1:9222"
    assert settings.gemini_auth == "oauth"
    assert settings.gemini_api_key is None


def test_the_brains_variable_names_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STREAM_BROWSER", "false")
    monkeypatch.setenv("CDP_PORT", "9333")
    monkeypatch.setenv("CDP_HOST", "127.0.0.2")
    monkeypatch.setenv("GEMINI_AUTH", "APIKEY")
    monkeypatch.setenv("GEMINI_API_KEY", "k-123")
    monkeypatch.setenv("GEMINI_MODEL", "gemini-x")
    settings = build_settings()
    assert settings.stream_browser is False
    assert settings.cdp_endpoint == "http://127.0.0.2:9333"
    assert settings.gemini_auth == "apikey"
    assert settings.gemini_api_key is not None
    assert settings.gemini_api_key.get_secret_value() == "k-123"
    assert "k-123" not in repr(settings) and "k-123" not in str(settings.model_dump())


def test_a_full_cdp_url_wins_over_host_and_port(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CDP_URL", "http://10.1.2.3:9999/")
    monkeypatch.setenv("CDP_PORT", "1234")
    assert build_settings().cdp_endpoint == "http://10.1.2.3:9999"


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("CDP_PORT", "abc", "CDP_PORT='abc' is not valid: expected a port number 1-65535"),
        ("CDP_PORT", "70000", "CDP_PORT='70000' is not valid: expected a port number 1-65535"),
        (
            "GEMINI_AUTH",
            "foo",
            "GEMINI_AUTH='foo' is not valid: expected one of 'oauth' or 'apikey'",
        ),
        ("STREAM_BROWSER", "maybe", "STREAM_BROWSER='maybe' is not valid: expected true or false"),
        ("SB_SETTLE_MS", "-5", "SB_SETTLE_MS='-5' is not valid: expected a whole number (>= 0"),
    ],
)
def test_a_bad_value_gives_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, expected: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as info:
        build_settings()
    assert str(info.value).startswith(expected)
    assert "\n" not in str(info.value)


def test_the_cli_exits_2_with_the_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CDP_PORT", "abc")
    assert main(["doctor"]) == 2
    err = capsys.readouterr().err
    assert "CDP_PORT='abc' is not valid" in err


def test_the_environment_beats_dotenv_which_beats_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "playwright.config.toml"
    config.write_text('[cdp]\nport = 9401\nhost = "127.0.0.9"\n[timeouts]\nsettle_ms = 77\n')
    monkeypatch.setenv("STREAM_BROWSER_CONFIG", str(config))
    env = tmp_path / ".env"
    env.write_text("CDP_PORT=9402\nGEMINI_API_KEY=from-dotenv\n")
    assert build_settings().cdp_port == 9401
    assert build_settings().settle_ms == 77
    assert load_settings(env).cdp_port == 9402
    monkeypatch.setenv("CDP_PORT", "9403")
    settings = load_settings(env)
    assert settings.cdp_port == 9403
    assert settings.cdp_host == "127.0.0.9"
    assert settings.gemini_api_key is not None


def test_a_broken_config_file_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[cdp\nport=")
    monkeypatch.setenv("STREAM_BROWSER_CONFIG", str(config))
    with pytest.raises(SettingsError, match="not valid TOML"):
        build_settings()
