"""Neutralise web text so nothing in it reads as an envelope fence or a chat-role tag.

Guards against look-alikes, not just exact strings: fullwidth and mathematical letters (NFKC),
Cyrillic and other confusables (the Unicode TR39 skeleton, `_confusables.py`), any case and
any separators. Detection runs on a folded copy of the text that remembers where each folded
character came from; only the matched brackets and fence words of the original are
rewritten, so the page's text stays as it was written. Invisible characters (zero-width,
bidi, tag characters, variation selectors) are removed outright.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterator
from itertools import accumulate

from ._confusables import SKELETON

QUOTED_FENCE = "(quoted) untrusted web extract"
TAG_OPEN, TAG_CLOSE = "\u27e8", "\u27e9"  # ⟨ ⟩: not TR39 confusables of < and >
RUN_OPEN, RUN_CLOSE = "\u00ab", "\u00bb"  # « »: likewise

# Zero-width, bidi and other format characters, Hangul fillers, variation selectors, Unicode
# tag characters and lone surrogates: they hide, reorder or smuggle text.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\ud800-\udfff"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_LINE_ENDS = re.compile("\r\n?|[\u2028\u2029]")
_SPACES = re.compile(r"[ \t]{2,}")
_DROPPED = frozenset({"Mn", "Me", "Cf"})  # marks and format characters vanish when folded
_SEP = r"[\W_]*"  # between letters of a fence word or a role name: anything but letters


def fold_char(char: str) -> str:
    """One character as its folded form: NFKD, TR39 skeleton, case-folded, marks dropped.

    Repeated until stable, since case folding can land on another confusable (`M` -> `m`
    -> `rn`). An empty string means the character is invisible to matching.
    """
    out, previous = unicodedata.normalize("NFKD", char).translate(SKELETON), ""
    for _ in range(4):
        if out == previous:
            break
        previous = out
        out = unicodedata.normalize("NFKD", out.casefold()).translate(SKELETON)
    return "".join(c for c in out if unicodedata.category(c) not in _DROPPED)


class _FoldCache(dict[str, str]):
    """fold_char, memoised (bounded: a page of distinct rare characters cannot grow it)."""

    def __missing__(self, char: str) -> str:
        if len(self) > 50_000:
            self.clear()
        value = self[char] = fold_char(char)
        return value


_FOLDS = _FoldCache()


class Folded:
    """A folded copy of a text that maps each folded position back to its source index."""

    def __init__(self, text: str) -> None:
        pieces = self._pieces = list(map(_FOLDS.__getitem__, text))
        self.text = "".join(pieces)
        self._ends = list(accumulate(map(len, pieces)))

    def source(self, position: int) -> int:
        """The index in the original text of the character folded at `position`."""
        return bisect_right(self._ends, position)

    def span(self, match: re.Match[str]) -> tuple[int, int]:
        """The original span of a match on the folded text, with the marks that follow it."""
        end = self.source(match.end() - 1) + 1
        while end < len(self._pieces) and not self._pieces[end]:
            end += 1
        return self.source(match.start()), end


def _letters(word: str) -> str:
    """A regex for `word` on folded text: each letter in either case, separators between."""
    parts = []
    for char in word:
        if not char.isalnum():
            continue  # the word's own separators are covered by _SEP
        options = {fold_char(char.lower()), fold_char(char.upper())} - {""}
        parts.append("(?:" + "|".join(re.escape(o) for o in sorted(options, key=len)[::-1]) + ")")
    return _SEP.join(parts)


_END, _UNTRUSTED, _WEB, _EXTRACT = (_letters(w) for w in ("end", "untrusted", "web", "extract"))
_FENCE_WORDS = re.compile(
    f"(?:{_END}{_SEP})?{_UNTRUSTED}{_SEP}{_WEB}{_SEP}{_EXTRACT}|{_END}{_SEP}{_UNTRUSTED}"
)
_FENCE_RUN = re.compile(r"[<>](?:\s*[<>]){2,}")
ROLE_NAMES = (
    "system", "user", "assistant", "developer", "human", "model", "tool", "function",
    "ipython", "im_start", "im_end", "im_sep", "endoftext", "eot_id", "start_header_id",
    "end_header_id", "begin_of_text", "start_of_turn", "end_of_turn", "inst", "sys",
    "instructions", "untrusted",
)  # fmt: skip
_SLASH = "(?:" + "|".join(re.escape(fold_char(c)) for c in "/|!?") + ")"
# Between `<` and the name: separators, but not another `<` (the match starts at the last
# one), and never given back (possessive). Either way a run of `</</</...` made the match
# cubic in its length (`[\W_]*` and `/` overlap), holding the GIL for hours.
_GAP = r"(?:(?!<)[\W_])*+"
_GAP_CHAR = re.compile(r"[\W_]")
_ROLE_TAG = re.compile(
    f"<{_GAP}(?:{_SLASH}{_GAP})?(?:{'|'.join(_letters(n) for n in ROLE_NAMES)})[^<>\\n]*>?"
)
# Any closed tag, however long its attributes (`<x ...>`, `</x>`, `<|x|>`, `<!x>`).
_ANY_TAG = re.compile(f"<{_SLASH}?[a-z][^<>\\n]*>")

Edit = tuple[int, int, str]


def _fence_word_edits(text: str, folded: Folded) -> Iterator[Edit]:
    for match in _FENCE_WORDS.finditer(folded.text):
        start, end = folded.span(match)
        if text[start:end] == QUOTED_FENCE[9:] and text[max(0, start - 9) : start] == "(quoted) ":
            continue  # our own rewrite, seen again
        yield start, end, QUOTED_FENCE


def _run_edits(folded: Folded) -> Iterator[Edit]:
    for match in _FENCE_RUN.finditer(folded.text):
        start, end = folded.span(match)
        yield start, end, RUN_OPEN if match.group(0)[0] == "<" else RUN_CLOSE


def _openers_before(folded: Folded, start: int) -> Iterator[int]:
    """The other `<` of the separator run that ends at a role tag's `<` (`< <system>`):
    `_ROLE_TAG` starts at the last one, but each of them opens the same tag."""
    text, position = folded.text, start - 1
    while position >= 0 and _GAP_CHAR.match(text, position):
        if text[position] == "<":
            yield folded.source(position)
        position -= 1


def _tag_edits(folded: Folded) -> Iterator[Edit]:
    for pattern in (_ROLE_TAG, _ANY_TAG):
        for match in pattern.finditer(folded.text):
            opener = folded.source(match.start())
            if pattern is _ROLE_TAG:
                for other in _openers_before(folded, match.start()):
                    yield other, other + 1, TAG_OPEN
            yield opener, opener + 1, TAG_OPEN
            if match.group(0).endswith(">"):
                closer = folded.source(match.end() - 1)
                yield closer, closer + 1, TAG_CLOSE


def find_edits(text: str) -> list[Edit]:
    """Non-overlapping rewrites (start, end, replacement) that neutralise `text`, in order."""
    folded = Folded(text)
    found = [*_run_edits(folded), *_fence_word_edits(text, folded), *_tag_edits(folded)]
    kept: list[Edit] = []
    for edit in sorted(found, key=lambda e: (e[0], e[0] - e[1])):
        if not kept or edit[0] >= kept[-1][1]:
            kept.append(edit)
    return kept


def _apply(text: str, edits: list[Edit]) -> str:
    out, position = [], 0
    for start, end, replacement in edits:
        out.append(text[position:start])
        out.append(replacement)
        position = end
    out.append(text[position:])
    return "".join(out)


def strip_invisible(text: str) -> str:
    """NFC, invisible characters removed, line ends unified (U+2028 and U+2029 too: they
    end a line for `str.splitlines` and many renderers), control characters as spaces."""
    text = _INVISIBLE.sub("", unicodedata.normalize("NFC", text))
    return _CONTROL.sub(" ", _LINE_ENDS.sub("\n", text))


def neutralize(text: str) -> str:
    """Make web text safe to place inside the envelope, keeping it readable.

    Fence runs (`<<<`, `＜＜<`, `≪<`) become one `«`/`»`, fence words in any disguise become
    `(quoted) untrusted web extract`, tags lose their angle brackets (`⟨/system⟩`).
    """
    text = strip_invisible(text)
    for _ in range(3):  # a second pass only when a rewrite exposed something new
        edits = find_edits(text)
        if not edits:
            break
        text = _apply(text, edits)
    return _SPACES.sub(" ", text)


def has_hazard(text: str) -> bool:
    """True when `text` holds anything `neutralize` would rewrite or remove."""
    return strip_invisible(text) != text or bool(find_edits(text))
