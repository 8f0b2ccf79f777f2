"""The font check on a real Chromium: Hangul, kana and Han drawn as text, or found as boxes.

"Without the fonts" is a Chromium whose fontconfig (FONTCONFIG_FILE) knows only a Latin font
folder, so every CJK character falls back to the box; the check must say so and name the fix.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from browser_core import ChromeProcess, launch_chrome, stop_pid
from browser_core.chrome import cdp_targets, free_port
from browser_core.stage import _fonts
from browser_core.stage._fonts import SAMPLES, cached_font_check, check_fonts

LATIN_DIR = Path("/usr/share/fonts/truetype/dejavu")


@pytest.fixture(scope="module")
def latin_only_chrome(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromeProcess]:
    if not LATIN_DIR.is_dir():
        pytest.fail(f"{LATIN_DIR} is missing: apt-get install fonts-dejavu-core")
    tmp = tmp_path_factory.mktemp("latin-only")
    conf = tmp / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
        f"<dir>{LATIN_DIR}</dir><cachedir>{tmp / 'cache'}</cachedir></fontconfig>"
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FONTCONFIG_FILE", str(conf))
        proc = launch_chrome(
            port=free_port(), user_data_dir=str(tmp / "profile"), headless=True, egress=False
        )
    yield proc
    stop_pid(proc.pid)


def test_a_set_up_machine_renders_hangul_kana_and_han(chrome: ChromeProcess) -> None:
    check = check_fonts(chrome.endpoint)
    assert check.checked, check.detail
    assert check.ok, f"{check.detail}; fix: {check.fix}"
    assert check.boxes == {}


def test_without_cjk_fonts_the_check_says_boxes_and_how_to_fix(
    latin_only_chrome: ChromeProcess,
) -> None:
    check = check_fonts(latin_only_chrome.endpoint)
    assert check.checked and not check.ok
    assert set(check.boxes) == {"Hangul", "kana", "Han"}
    assert check.boxes["Hangul"] == SAMPLES["Hangul"]  # every character, not just some
    assert "boxes" in check.detail and "Hangul" in check.detail
    assert "apt-get install fonts-noto-cjk" in check.fix
    assert check.as_dict()["fix"] == check.fix


def test_the_check_leaves_no_tab_behind_and_never_uses_a_page_target(
    chrome: ChromeProcess,
) -> None:
    before = {t["id"]: t.get("url") for t in cdp_targets(chrome.endpoint)}
    assert check_fonts(chrome.endpoint).checked
    after = {t["id"]: t.get("url") for t in cdp_targets(chrome.endpoint)}
    assert after == before


def test_the_cached_check_asks_chrome_once_per_chrome(
    chrome: ChromeProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real = _fonts.check_fonts

    def counted(endpoint: str, timeout: float = 3.0) -> _fonts.FontCheck:
        calls.append(endpoint)
        return real(endpoint, timeout)

    monkeypatch.setattr(_fonts, "check_fonts", counted)
    monkeypatch.setattr(_fonts, "_CACHE", {})
    first = cached_font_check(chrome.endpoint)
    second = cached_font_check(chrome.endpoint)
    assert first == second and first.ok and len(calls) == 1


def test_nothing_to_ask_is_not_a_font_failure() -> None:
    check = check_fonts(f"http://127.0.0.1:{free_port()}", timeout=0.5)
    assert check.ok and not check.checked and check.detail.startswith("not checked")


def test_readyz_says_which_scripts_are_boxes_and_the_fix(
    latin_only_chrome: ChromeProcess, chrome: ChromeProcess, tmp_path: Path
) -> None:
    from search.service._readiness import readiness
    from tests.conftest import make_settings

    boxes = readiness(make_settings(latin_only_chrome, tmp_path))["fonts"]
    assert boxes["ok"] is False and "Hangul" in boxes["detail"]
    assert "fonts-noto-cjk" in boxes["fix"]
    assert readiness(make_settings(chrome, tmp_path))["fonts"] == {
        "ok": True,
        "detail": "Hangul, kana and Han render as text",
    }


def test_doctor_names_the_boxes_and_the_fix(
    latin_only_chrome: ChromeProcess, tmp_path: Path
) -> None:
    from tests.test_cli import run

    out = run(tmp_path, "doctor", CDP_PORT=str(latin_only_chrome.port)).stdout.decode()
    assert "FAIL fonts: drawn as empty boxes: Hangul" in out
    assert "apt-get install fonts-noto-cjk" in out
    assert "consent banners:" in out
