"""Query-focused reading: the passages of a page's text that answer the question, within a
character budget, for the envelope (the brain) and the stage (the viewers) alike.

A pure step (no browser, no I/O). The text is split into passages (its paragraphs; a long
one is cut into windows at sentence ends), each passage is scored against the question with
BM25 (words for scripts written with spaces; character bigrams for Han, kana and Hangul,
whose words are not separated, or whose particles are glued to the noun), and the budget is
filled with a short lead (the opening sentence or two) and then the best passages, given in
page order with each gap marked `[…]`. A text that fits the budget, or a read with no
question, is returned from its beginning as before: the opening guards against nothing.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

GAP = "[…]"
# Passages longer than this are cut into windows of whole sentences (characters); a
# window of a fraction of the budget lets a small budget hold several candidates.
WINDOW_MAX = 800
WINDOW_SHARE = 0.5
# The lead: the text's opening sentences, at most this share of the budget.
LEAD_SHARE = 0.1
LEAD_MAX = 320
# BM25's saturation and length normalisation (chosen by cross-validation, see docs).
K1 = 1.2
B = 0.75
# The snippet a search showed for the page (Google's chosen passage) weighs this much
# against the question's own terms.
HINT_WEIGHT = 1.0

# Han (with extensions), kana, Hangul: scored on character bigrams.
_UNSPACED = (
    "\u3005-\u3007\u3040-\u309f\u30a0-\u30fa\u30fc-\u30ff\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9d\uac00-\ud7af\u1100-\u11ff\u3130-\u318f"
    "\U00020000-\U0003134f"
)
_TOKEN = re.compile(f"([{_UNSPACED}]+)|[^\\W_{_UNSPACED}]+")
# A sentence ends at . ! ? (followed by a space) or at 。！？ (spaces or not).
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+|(?<=[。！？])[」』）\)]*\s*")
# Words that every question has and no answer needs.
_STOP = frozenset(
    "a an the of in on at to for by with from and or is are was were be been being do does "  # noqa: SIM905
    "did what which who whom whose when where why how that this these those it its as into "
    "than then there their they he she his her him i you we our your my me name named "
    "called many much".split()
)


@dataclass(frozen=True)
class Passage:
    """A span of the whole text (`start`, `end` offsets) and its score for the question."""

    start: int
    end: int
    score: float = 0.0

    def text(self, whole: str) -> str:
        return whole[self.start : self.end]


@dataclass(frozen=True)
class Selection:
    """What a read keeps of a page's text for a question.

    `text` is what the envelope carries (within the budget); `passages` are the kept spans,
    in page order (the lead first when there is one); `best` is the highest-scored one, the
    one the stage highlights; `focused` is False when the text is the page's opening (no
    question, a text that fits, or nothing scored).
    """

    text: str
    passages: tuple[Passage, ...] = ()
    best: Passage | None = None
    whole_chars: int = 0
    focused: bool = False
    lead: Passage | None = None
    scored: int = 0  # passages the text was split into
    extra: dict[str, float] = field(default_factory=dict)


def tokens(text: str) -> list[str]:
    """Lowercase words of spaced scripts (question words dropped) and character bigrams of
    unspaced runs (a run of one character is itself)."""
    out: list[str] = []
    for match in _TOKEN.finditer(text.lower()):
        run = match.group(1)
        if run is None:
            word = match.group(0)
            if word not in _STOP:
                out.append(word[:-1] if len(word) > 3 and word.endswith("s") else word)
        elif len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def split_passages(text: str, window: int = WINDOW_MAX) -> list[Passage]:
    """The text's paragraphs (its lines), a paragraph longer than `window` cut into windows
    of whole sentences; offsets into `text`."""
    out: list[Passage] = []
    at = 0
    for line in text.split("\n"):
        start, end = at, at + len(line)
        at = end + 1
        stripped = line.strip()
        if not stripped:
            continue
        start += len(line) - len(line.lstrip())
        end -= len(line) - len(line.rstrip())
        if end - start <= window:
            out.append(Passage(start, end))
        else:
            out.extend(_windows(text, start, end, window))
    return out


def _windows(text: str, start: int, end: int, window: int) -> Iterable[Passage]:
    """Whole sentences of `text[start:end]` packed into windows of at most `window` chars
    (a single longer sentence is a window of its own)."""
    cuts = [start]
    for match in _SENTENCE_END.finditer(text, start, end):
        if start < match.end() < end:
            cuts.append(match.end())
    cuts.append(end)
    first = start
    for i in range(1, len(cuts)):
        if cuts[i] - first > window and cuts[i - 1] > first:
            yield Passage(first, _rstrip(text, first, cuts[i - 1]))
            first = cuts[i - 1]
    yield Passage(first, _rstrip(text, first, end))


def _rstrip(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def score_passages(
    passages: Sequence[str], question: str, hints: Sequence[str] = (), k1: float = K1, b: float = B
) -> list[float]:
    """BM25 of each passage for the question's terms (and the hints', weighted), with the
    page's own passages as the collection."""
    query: dict[str, float] = dict.fromkeys(tokens(question), 1.0)
    for hint in hints:
        for term in set(tokens(hint)):
            query[term] = query.get(term, 0.0) + HINT_WEIGHT
    if not query or not passages:
        return [0.0] * len(passages)
    bags = [Counter(tokens(passage)) for passage in passages]
    lengths = [sum(bag.values()) for bag in bags]
    average = (sum(lengths) / len(lengths)) or 1.0
    count = len(bags)
    scores = [0.0] * count
    for term, weight in query.items():
        df = sum(1 for bag in bags if term in bag)
        if not df:
            continue
        idf = weight * math.log(1.0 + (count - df + 0.5) / (df + 0.5))
        for i, bag in enumerate(bags):
            tf = bag.get(term)
            if tf:
                norm = k1 * (1.0 - b + b * lengths[i] / average)
                scores[i] += idf * tf * (k1 + 1.0) / (tf + norm)
    return scores


def opening(text: str, budget: int) -> str:
    """Today's read: the text's first `budget` characters."""
    return text[:budget]


def select(
    text: str,
    question: str | None,
    budget: int,
    *,
    hints: Sequence[str] = (),
) -> Selection:
    """The passages of `text` that answer `question`, within `budget` characters.

    A text that fits is returned whole, and one with no question (or where nothing scores)
    is cut to its opening; both unfocused. A text that fits still says which of its
    passages answers best (`best`, `passages`: all of them), for the stage to show."""
    whole = len(text)
    if not question or not question.strip():
        return Selection(text=opening(text, budget), whole_chars=whole)
    window = max(160, min(WINDOW_MAX, int(budget * WINDOW_SHARE)))
    passages = split_passages(text, window)
    scores = score_passages([p.text(text) for p in passages], question, hints)
    scored = [Passage(p.start, p.end, s) for p, s in zip(passages, scores, strict=True)]
    top = max(scored, key=lambda p: p.score, default=None)
    if top is None or top.score <= 0.0:
        return Selection(text=opening(text, budget), whole_chars=whole, scored=len(scored))
    if whole <= budget:
        return Selection(
            text=text, passages=tuple(scored), best=top, whole_chars=whole, scored=len(scored)
        )
    chosen, lead = _fill(text, scored, _lead(text, scored[0], budget), budget)
    body, kept = _render(text, chosen, lead)
    best = max((p for p in chosen if p is not lead), key=lambda p: p.score, default=None)
    return Selection(
        text=body,
        passages=tuple(kept),
        best=best,
        whole_chars=whole,
        focused=True,
        lead=lead,
        scored=len(scored),
    )


def _lead(text: str, first: Passage, budget: int) -> Passage | None:
    """The opening sentence or two of the first passage, within the lead's share."""
    cap = min(LEAD_MAX, int(budget * LEAD_SHARE))
    end = first.start
    for match in _SENTENCE_END.finditer(text, first.start, first.end):
        if match.end() - first.start > cap:
            break
        end = match.end()
    if first.end - first.start <= cap:
        end = first.end
    end = _rstrip(text, first.start, end)
    return Passage(first.start, end, 0.0) if end > first.start else None


def _fill(
    text: str, scored: list[Passage], lead: Passage | None, budget: int
) -> tuple[list[Passage], Passage | None]:
    """The best passages that fit (each counted with a gap mark: an upper bound of what it
    adds), each window cut inside a paragraph widened by the sentence on either side of its
    cut (an answer that ends or opens a sentence keeps its context), then, while room is
    left, the unscored ones in page order (the opening, as today). The lead is dropped when
    the passage it opens is kept whole."""
    room = budget - 2 * len(GAP) - 2  # a gap mark before the first and after the last
    if lead is not None:
        room -= lead.end - lead.start + len(GAP) + 2
    chosen: list[Passage] = []
    order = sorted(range(len(scored)), key=lambda i: (-scored[i].score, i))
    for positive in (True, False):
        for i in order:
            candidate = scored[i]
            if (candidate.score > 0.0) != positive or _covered(candidate, chosen):
                continue
            cost = candidate.end - candidate.start + len(GAP) + 2
            holds_lead = lead is not None and candidate.start <= lead.start < candidate.end
            if holds_lead and lead is not None:
                cost -= lead.end - lead.start + len(GAP) + 2
            if cost <= room:
                chosen.append(candidate)
                room -= cost
                if holds_lead:
                    lead = None
        if positive:
            chosen, room = _widen(text, chosen, room)
    return chosen, lead


def _covered(candidate: Passage, chosen: list[Passage]) -> bool:
    return any(p.start <= candidate.start and candidate.end <= p.end for p in chosen)


def _widen(text: str, chosen: list[Passage], room: int) -> tuple[list[Passage], int]:
    """Each chosen window (best first) with the sentence before and after its cuts inside
    its paragraph, while room is left."""
    out: list[Passage] = []
    for window in chosen:
        start, end = window.start, window.end
        after = _next_sentence_end(text, end)
        if after is not None and after - end <= room:
            room -= after - end
            end = after
        before = _previous_sentence_start(text, start)
        if before is not None and start - before <= room:
            room -= start - before
            start = before
        out.append(Passage(start, end, window.score))
    return out, room


def _next_sentence_end(text: str, end: int) -> int | None:
    """The end of the sentence after `end`, when `end` cuts a paragraph."""
    stop = text.find("\n", end)
    stop = len(text) if stop < 0 else stop
    if not text[end:stop].strip():
        return None
    match = _SENTENCE_END.search(text, end + 1, stop)
    return _rstrip(text, end, match.end() if match else stop)


def _previous_sentence_start(text: str, start: int) -> int | None:
    """The start of the sentence before `start`, when `start` cuts a paragraph."""
    para = text.rfind("\n", 0, start) + 1
    if not text[para:start].strip():
        return None
    last = para
    for match in _SENTENCE_END.finditer(text, para, start):
        if match.end() < start:
            last = match.end()
    return last


def _render(text: str, passages: list[Passage], lead: Passage | None) -> tuple[str, list[Passage]]:
    """The kept spans in page order, contiguous ones joined as in the text, gaps marked."""
    spans = sorted(passages, key=lambda p: p.start)
    if lead is not None:
        spans.insert(0, lead)
    parts: list[str] = []
    previous_end: int | None = None
    for span in spans:
        if previous_end is not None and span.start < previous_end:  # widened into it
            parts.append(text[previous_end : span.end])
            previous_end = max(previous_end, span.end)
            continue
        if previous_end is not None:
            between = text[previous_end : span.start]
            if between.strip():
                parts.append(f"\n{GAP}\n")
            else:  # contiguous: as in the text, its run of spaces kept to one
                parts.append("\n" if "\n" in between else " ")
        elif span.start > 0 and text[: span.start].strip():
            parts.append(f"{GAP}\n")
        parts.append(text[span.start : span.end])
        previous_end = span.end
    if previous_end is not None and text[previous_end:].strip():
        parts.append(f"\n{GAP}")
    return "".join(parts), spans
