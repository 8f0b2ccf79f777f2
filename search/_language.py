"""Google's interface language and region from the query's script (`SB_GOOGLE_HL=auto`),
and words counted in any script (`count_words`).

A Korean query searched with `hl=en&gl=us` gets English snippets and US-ranked pages that
the brain then reads aloud in the wrong language. The script of the query's letters says
more than any default: Hangul is Korean, kana is Japanese, Thai is Thai. Scripts shared by
many languages (Latin, and Arabic or Han for the region) keep the configured value.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

AUTO = "auto"


@dataclass(frozen=True)
class Locale:
    """A Google `hl` (interface language) and `gl` (region); `gl=None` keeps the configured
    region, for scripts written in many countries."""

    hl: str
    gl: str | None


# Unicode name prefix of a letter -> the locale its script says most likely.
_SCRIPTS: dict[str, Locale] = {
    "HANGUL": Locale("ko", "kr"),
    "HIRAGANA": Locale("ja", "jp"),
    "KATAKANA": Locale("ja", "jp"),
    "CJK": Locale("zh-CN", None),
    "CYRILLIC": Locale("ru", "ru"),
    "ARABIC": Locale("ar", None),
    "THAI": Locale("th", "th"),
    "HEBREW": Locale("iw", "il"),
    "GREEK": Locale("el", "gr"),
    "DEVANAGARI": Locale("hi", "in"),
    "BENGALI": Locale("bn", None),
    "TAMIL": Locale("ta", "in"),
    "GEORGIAN": Locale("ka", "ge"),
    "ARMENIAN": Locale("hy", "am"),
}
# Letters that single out one language among those sharing a script.
_MARKERS: tuple[tuple[str, str, Locale], ...] = (
    ("CYRILLIC", "іїєґІЇЄҐ", Locale("uk", "ua")),
    ("ARABIC", "پچژگ", Locale("fa", "ir")),
)
# Kana or Hangul anywhere decide, whatever share of Han characters surrounds them.
_DECISIVE = ("HIRAGANA", "KATAKANA", "HANGUL")


def _script(char: str) -> str | None:
    if not char.isalpha() or char.isascii():
        return None
    name = unicodedata.name(char, "")
    prefix = name.split(" ", 1)[0]
    if prefix in _SCRIPTS:
        return prefix
    if name.startswith("HALFWIDTH KATAKANA"):
        return "KATAKANA"
    return None


def script_locale(query: str) -> Locale | None:
    """The locale the query's letters point to; None for Latin-only (or no) letters."""
    counts = Counter(script for script in map(_script, query) if script)
    if not counts:
        return None
    decisive = [script for script in _DECISIVE if counts[script]]
    script = decisive[0] if decisive else counts.most_common(1)[0][0]
    for marked_script, letters, locale in _MARKERS:
        if script == marked_script and any(letter in query for letter in letters):
            return locale
    return _SCRIPTS[script]


def google_locale(query: str, hl: str, gl: str, fallback_hl: str = "en") -> tuple[str, str]:
    """The `(hl, gl)` to search `query` with: a fixed `hl` is kept as configured; `hl=auto`
    follows the query's script, else `fallback_hl` with the configured region."""
    if hl.strip().lower() != AUTO:
        return hl, gl
    locale = script_locale(query)
    if locale is None:
        return fallback_hl, gl
    return locale.hl, locale.gl or gl


# Scripts written without spaces between words: each character counts as a word, as word
# processors count Chinese and Japanese (a Japanese sentence of forty characters is one
# "word" to str.split()). Han (with its extensions and compatibility forms), kana (full and
# half width) and the CJK symbols block's iteration marks; Hangul is written with spaces.
_UNSPACED = re.compile(
    "[\u3005-\u3007\u3040-\u309f\u30a0-\u30fa\u30fc-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\uff66-\uff9d\U00020000-\U0003134f]"
)


# Their punctuation (、。「」 and the full-width forms of !?,.:;) separates, like a space.
_UNSPACED_PUNCTUATION = re.compile(
    "[\u3000-\u3004\u3008-\u303f\u30fb\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]"
)


# The first bytes of the UTF-8 encoding of every character `_UNSPACED` matches (U+3005 to
# U+9FFF start with E3-E9, the compatibility and half-width forms with EF, the extensions past
# U+20000 with F0). A text whose encoding holds none of them has no such character: finding
# one byte in the encoding takes a sixth of the pattern's scan of the text, and Latin-script
# text, curly quotes and dashes included (E2), never needs the scan.
_UNSPACED_LEADS = (*(bytes([lead]) for lead in range(0xE3, 0xEA)), b"\xef", b"\xf0")


def count_words(text: str) -> int:
    """Words in `text` in any script: runs between spaces, and each Chinese or Japanese
    character (their punctuation is no word). Every word budget and threshold counts with
    this."""
    unspaced = len(_UNSPACED.findall(text)) if _may_be_unspaced(text) else 0
    if not unspaced:
        return len(text.split())
    rest = _UNSPACED_PUNCTUATION.sub(" ", _UNSPACED.sub(" ", text))
    return unspaced + len(rest.split())


def _may_be_unspaced(text: str) -> bool:
    """Whether `text` can hold a character of a script written without spaces (a lone
    surrogate encodes as ED, which starts none of them)."""
    if text.isascii():  # known without reading the text
        return False
    raw = text.encode("utf-8", "surrogatepass")
    return any(lead in raw for lead in _UNSPACED_LEADS)
