"""`SB_GOOGLE_HL=auto`: Google's language and region from the query's script."""

from __future__ import annotations

import pytest

from browser_core import build_settings
from search._language import Locale, google_locale, script_locale


@pytest.mark.parametrize(
    ("query", "hl", "gl"),
    [
        ("서울 날씨", "ko", "kr"),
        ("iPhone 15 가격", "ko", "kr"),  # Hangul among Latin letters still decides
        ("量子場の理論", "ja", "jp"),  # kana decide over the Han characters around them
        ("ｶﾀｶﾅ", "ja", "jp"),
        ("погода москва", "ru", "ru"),
        ("погода Київ", "uk", "ua"),
        ("สภาพอากาศ", "th", "th"),
        ("מזג אוויר", "iw", "il"),
        ("καιρός αθήνα", "el", "gr"),
        ("आज का मौसम", "hi", "in"),
        ("هوای تهران گرم", "fa", "ir"),
    ],
)
def test_a_script_proper_to_one_country_sets_language_and_region(
    query: str, hl: str, gl: str
) -> None:
    assert google_locale(query, "auto", "us") == (hl, gl)


@pytest.mark.parametrize(("query", "hl"), [("الطقس اليوم", "ar"), ("北京 天气", "zh-CN")])
def test_a_script_of_many_countries_sets_the_language_and_keeps_the_region(
    query: str, hl: str
) -> None:
    assert google_locale(query, "auto", "se") == (hl, "se")


@pytest.mark.parametrize("query", ["crow names", "matkasse göteborg", "243", "", "  "])
def test_latin_letters_or_none_fall_back_to_the_configured_language(query: str) -> None:
    assert script_locale(query) is None
    assert google_locale(query, "auto", "se", fallback_hl="sv") == ("sv", "se")


def test_a_fixed_language_is_kept_whatever_the_query() -> None:
    assert google_locale("서울 날씨", "en", "us") == ("en", "us")
    assert google_locale("서울 날씨", "AUTO", "us") == ("ko", "kr")
    assert script_locale("서울") == Locale("ko", "kr")


def test_auto_is_the_default_and_the_fallback_is_configurable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("SB_GOOGLE_HL", "SB_GOOGLE_HL_FALLBACK", "STREAM_BROWSER_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    assert build_settings().google_hl == "auto"
    monkeypatch.setenv("SB_GOOGLE_HL_FALLBACK", "de")
    assert build_settings().google_hl_fallback == "de"
