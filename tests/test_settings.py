"""Settings: the brain's variable names, defaults from playwright.config.toml, clear errors."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

import pytest

from browser_core import Settings, SettingsError, build_settings, load_settings
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


# -- sane values (issue 11 item 4) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SB_CALL_DEADLINE_S", "inf"),
        ("SB_CALL_DEADLINE_S", "nan"),
        ("SB_CALL_DEADLINE_S", "-1"),
        ("SB_CALL_DEADLINE_S", "1e9"),
        ("SB_OP_TIMEOUT_S", "Infinity"),
        ("SB_NAV_TIMEOUT_S", "0"),
        ("SB_CONNECT_TIMEOUT_S", "NaN"),
        ("SB_CACHE_TTL_S", "inf"),
        ("GEMINI_TIMEOUT_S", "1e12"),
        ("GEMINI_REST_TIMEOUT_S", "-inf"),
    ],
)
def test_deadlines_and_timeouts_must_be_finite_and_within_bounds(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as info:
        build_settings()
    message = str(info.value)
    assert message.startswith(f"{name}={value!r} is not valid: expected a number (")
    assert "<= " in message and "\n" not in message


@pytest.mark.parametrize("value", ["abc", "1280", "10,10", "1280,800,3", "1280;800", "99999,1"])
def test_a_bad_window_size_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("SB_WINDOW_SIZE", value)
    with pytest.raises(SettingsError, match=r"expected WIDTH,HEIGHT in pixels"):
        build_settings()


def test_a_window_size_is_normalised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SB_WINDOW_SIZE", " 1920x1080 ")
    settings = build_settings()
    assert settings.window_size == "1920,1080" and settings.window == (1920, 1080)


KEY = "AIzaSy-settings-test-key-never-shown"


@pytest.mark.parametrize(
    "value", [KEY + "\r\n", KEY + "\n", f"{KEY}\rX", f"A\x1b{KEY}", f"{KEY} B"]
)
def test_a_key_with_control_characters_is_refused_without_echoing_it(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", value)
    with pytest.raises(SettingsError) as info:
        build_settings()
    message = str(info.value)
    assert message.startswith("GEMINI_API_KEY=<hidden> is not valid: expected a key without")
    assert KEY not in message and "AIza" not in message and "\n" not in message
    assert info.value.__cause__ is None and info.value.__suppress_context__


# -- the TOML file -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "key", "nearest"),
    [
        ("[cdp]\nprot = 9333\n", "cdp.prot", "cdp.port"),
        ("[timeouts]\ncall_deadline = 9\n", "timeouts.call_deadline", "timeouts.call_deadline_s"),
        ("[chrom]\nwindow_size = '800,600'\n", "chrom.window_size", "chrome.window_size"),
        ("port = 9333\n", "port", "cdp.port"),
    ],
)
def test_an_unknown_config_key_names_the_nearest_valid_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str, key: str, nearest: str
) -> None:
    config = tmp_path / "playwright.config.toml"
    config.write_text(content)
    monkeypatch.setenv("STREAM_BROWSER_CONFIG", str(config))
    with pytest.raises(SettingsError) as info:
        build_settings()
    message = str(info.value)
    assert f"unknown key '{key}'; did you mean '{nearest}'?" in message
    assert "\n" not in message


def test_the_repository_config_holds_only_what_differs_from_the_code_defaults() -> None:
    """Active keys differ from the defaults; the commented ones document them exactly."""
    from browser_core._settings import _TOML_KEYS

    config = Path(__file__).resolve().parents[1] / "playwright.config.toml"
    text = config.read_text(encoding="utf-8")
    active = dict(_flatten_toml(tomllib.loads(text)))
    documented, section = {}, ""
    for line in text.splitlines():
        if line.startswith("["):
            section = line.strip("[]")
        elif re.match(r"# [a-z_0-9]+ = ", line):
            key, value = next(iter(tomllib.loads(line[2:]).items()))
            documented[f"{section}.{key}"] = value
    defaults = {k: Settings.model_fields[f].default for k, f in _TOML_KEYS.items()}
    defaults = {k: list(v) if isinstance(v, tuple) else v for k, v in defaults.items()}
    for key, value in active.items():
        assert value != defaults[key], f"{key} repeats the code default: comment it out"
    for key, value in documented.items():
        assert value == defaults[key], f"the comment for {key} is out of date"
    assert set(active) | set(documented) == set(_TOML_KEYS)


def _flatten_toml(data: dict[str, object], prefix: str = "") -> list[tuple[str, object]]:
    items: list[tuple[str, object]] = []
    for key, value in data.items():
        if isinstance(value, dict):
            items.extend(_flatten_toml(value, f"{prefix}{key}."))
        else:
            items.append((f"{prefix}{key}", value))
    return items


# -- sources: no os.environ mutation, .env only in entry points ----------------------------------


def test_dotenv_is_applied_without_touching_os_environ(tmp_path: Path) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("settings loading wrote to the process environment")

    env = tmp_path / ".env"
    env.write_text("CDP_PORT=9402\nSTREAM_BROWSER=false\nGEMINI_API_KEY=from-dotenv\nOTHER=1\n")
    before = dict(os.environ)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "putenv", refuse)
        patch.setattr(os, "unsetenv", refuse)
        settings = load_settings(env)
    assert settings.cdp_port == 9402 and settings.stream_browser is False
    assert settings.gemini_api_key is not None
    assert dict(os.environ) == before


def test_only_entry_points_read_dotenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".env").write_text("CDP_PORT=9555\nGEMINI_AUTH=apikey\n")
    monkeypatch.chdir(tmp_path)
    assert build_settings().cdp_port == 9222  # tests and library code: never .env
    assert load_settings().cdp_port == 9555  # entry points: ./.env by default
    assert load_settings(None).cdp_port == 9222
    assert load_settings(tmp_path / "missing.env").cdp_port == 9222


def test_a_bad_dotenv_value_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = tmp_path / ".env"
    env.write_text("SB_CALL_DEADLINE_S=inf\n")
    with pytest.raises(SettingsError, match=r"^SB_CALL_DEADLINE_S='inf' is not valid"):
        load_settings(env)


def test_the_instance_is_sb_instance_else_the_host_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SB_INSTANCE", raising=False)
    host = build_settings().instance
    assert host and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}", host)
    monkeypatch.setenv("SB_INSTANCE", " stream-browser-3 ")
    assert build_settings().instance == "stream-browser-3"
    monkeypatch.setenv("SB_INSTANCE", "")
    assert build_settings().instance == host


@pytest.mark.parametrize("value", ["two words", "-leading", "a" * 64, 'x"y', "café"])
def test_an_instance_name_that_cannot_be_a_label_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("SB_INSTANCE", value)
    with pytest.raises(SettingsError) as info:
        build_settings()
    assert str(info.value).startswith(f"SB_INSTANCE={value!r} is not valid: expected a name of")
    assert "\n" not in str(info.value)


def test_the_stop_grace_fits_the_engines_default_ten_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert 5 <= build_settings().stop_grace_s <= 9  # room to answer before docker's SIGKILL
    monkeypatch.setenv("SB_STOP_GRACE_S", "42")
    assert build_settings().stop_grace_s == 42
    monkeypatch.setenv("SB_STOP_GRACE_S", "-1")
    with pytest.raises(SettingsError, match=r"^SB_STOP_GRACE_S='-1' is not valid: expected a num"):
        build_settings()
