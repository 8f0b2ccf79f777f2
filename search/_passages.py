"""Query-focused reading: the passages of a page's text that answer the question, within a
character budget, for the envelope (the brain) and the stage (the viewers) alike.

A pure step (no browser, no I/O). The text is split into passages (its paragraphs; a long
one is cut into windows at sentence ends), each passage is scored against the question with
BM25 (the stems of words for scripts written with spaces; character bigrams for Han, kana and
Hangul, whose words are not separated, or whose particles are glued to the noun), and the
budget is filled with a short lead (the opening sentence or two) and then the best passages,
given in page order with each gap marked `[…]`. At a voice's budget (`SENTENCE_BUDGET` and
under) the best passages' sentences are scored too (their own BM25, their passage's, the
question's phrases they hold, and a date or a number when an English question asks for one),
and the budget is filled with the best sentences, each with the sentence before and after it
in its paragraph.
Every read with a question also names its best few sentences with their context
(`highlights`) and how much of the question the best of them covers (`confidence`, 0 to 1: a
search that reads uses it to decide whether to open the next result). The confidence is the
question's alone: when a snippet's words helped choose the highlights, the sentences it is
taken from are ranked again without them. A text that fits the
budget, or a read with no question, is returned from its beginning as before.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

import snowballstemmer

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
# At budgets up to this the budget is filled with sentences (each with its neighbours), not
# whole passages: the sentences of the SENTENCE_POOL best passages, each scored with its own
# BM25 plus PASSAGE_WEIGHT times its passage's (chosen by cross-validation, see docs).
SENTENCE_BUDGET = 1000
SENTENCE_POOL = 8
PASSAGE_WEIGHT = 2.0
# The sentences a read names as its highlights (with a sentence of context each side).
HIGHLIGHTS = 3
# A sentence holding the question's terms next to each other as in the question (a name, a
# phrase: "Crimean War", "battle of Tchernaya") gains PHRASE_WEIGHT times the pair's mean idf
# for each such pair (chosen by cross-validation, see docs).
PHRASE_WEIGHT = 2.0
# A read's confidence: this much from the question's terms its best sentence (with context)
# holds, the rest from the question's neighbouring term pairs that stand within PAIR_REACH
# terms of each other there (chosen by cross-validation on results pages whose top results
# share the question's words: docs/reading.md).
CONFIDENCE_TERMS = 0.5
PAIR_REACH = 5
# An English question that asks for a date or a number ("when", "what year", "how many")
# multiplies by 1 + ANSWER_KIND_BONUS the score of a sentence holding a year, a month or a
# number (chosen by cross-validation, see docs).
ANSWER_KIND_BONUS = 0.2
# The reading model (a `meaning` given to `select`: search/_meaning.py), fused with BM25, never
# in its place: the sentences of the MODEL_POOL best passages (MODEL_CHARS characters at most)
# are compared with the question (MODEL_CHARS counted as characters of a spaced script: one
# of Han, kana or Hangul counts four, as it costs the model about as many tokens); a
# passage's score becomes its BM25 over the page's best
# plus MODEL_WEIGHT times its best sentence's similarity, a sentence's its lexical score over
# the best one's plus SENTENCE_MODEL_WEIGHT times its own (chosen by cross-validation, see
# docs/reading.md).
MODEL_POOL = 6
MODEL_CHARS = 3000
MODEL_WEIGHT = 1.0
SENTENCE_MODEL_WEIGHT = 1.0
# A question whose words the page mostly lacks, its function words included (under
# FOREIGN_COVERAGE of them: asked in another language than the page's; a question in the
# page's language shares at least its "the", "of", "is") has no lexical score to speak of: the model
# carries it, over the page's first FOREIGN_CHARS characters of sentences, weighted
# FOREIGN_WEIGHT, a similarity under MEANING_FLOOR counting for nothing (a question the page
# does not answer in any language keeps the opening).
FOREIGN_COVERAGE = 0.35
FOREIGN_SCRIPT = 0.1
FOREIGN_CHARS = 6000
FOREIGN_WEIGHT = 4.0
# A sentence that shares no term with the question is still a highlight when its similarity
# is at least this; the confidence mixes in CONFIDENCE_MODEL of the best highlight's
# similarity (scaled from MEANING_FLOOR..MEANING_FULL to 0..1), all of it for a foreign
# question (chosen by nested 5-fold cross-validation on the next result's hard set: see
# docs/reading.md; the lexical confidence alone is kept as `lexical`).
MEANING_HIGHLIGHT = 0.3
CONFIDENCE_MODEL = 0.5
MEANING_FLOOR = 0.15
MEANING_FULL = 0.6

# Thai, Lao, Myanmar, Khmer, Han (with extensions), kana, Hangul: scored on character
# bigrams (their words are not separated by spaces, or their particles are glued on).
_UNSPACED = (
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
    "\u3005-\u3007\u3040-\u309f\u30a0-\u30fa\u30fc-\u30ff\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9d\uac00-\ud7af\u1100-\u11ff\u3130-\u318f"
    "\U00020000-\U0003134f"
)
_TOKEN = re.compile(f"([{_UNSPACED}]+)|([^\\W_{_UNSPACED}]+)")
_UNSPACED_CHAR = re.compile(f"[{_UNSPACED}]")
# The script a question in an unspaced script is written in: Hangul, kana, else Han.
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
_SCRIPT_CLASSES = (
    re.compile("[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]"),
    re.compile("[\u3040-\u309f\u30a0-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9d]"),
    re.compile("[\u0e00-\u0e7f]"),
    re.compile("[\u0e80-\u0eff]"),
    re.compile("[\u1000-\u109f]"),
    re.compile("[\u1780-\u17ff]"),
)
# A sentence ends at . ! ? (and the Arabic and Devanagari marks ؟ ।) followed by a space,
# or at 。！？ (spaces or not).
_SENTENCE_END = re.compile(r"(?<=[.!?؟।])[\"'”’)\]]*\s+|(?<=[。！？])[」』）\)]*\s*")
# Words that every question has and no answer needs.
_STOP = frozenset(
    "a an the of in on at to for by with from and or is are was were be been being do does "  # noqa: SIM905
    "did what which who whom whose when where why how that this these those it its as into "
    "than then there their they he she his her him i you we our your my me name named "
    "called many much".split()
)
# Terms of unspaced scripts that ask rather than answer: bigrams of hiragana alone (Japanese
# particles and endings), Chinese question words, and Japanese and Korean ones.
_ASKING = re.compile(r"^[\u3040-\u309f]+$|[什么哪谁几怎为是否多少吗呢]")
_ASKING_WORDS = frozenset(
    {
        *("何", "誰", "いつ", "どこ"),
        *("무엇", "언제", "누구", "어디", "어느", "얼마", "어떤", "어떻", "무슨"),
    }
)
# Spaced words are cut to their stem (Snowball's English stemmer: "captured" and "capture",
# "cultivated" and "cultivation" meet), cached: a page's words repeat, and from one read to the
# next.
_STEMMER = snowballstemmer.stemmer("english")
# A question that asks for a date, or for a number, in English; and what answers it.
_ASKS_DATE = re.compile(
    r"^\s*(when|in what year|in which year)\b|\b(what|which) (year|decade|century|month|date)\b",
    re.IGNORECASE,
)
_ASKS_NUMBER = re.compile(
    r"\bhow (many|much|long|old|far|large|big|tall|high|often|fast)\b"
    r"|\bwhat (percentage|percent|proportion|number|amount)\b",
    re.IGNORECASE,
)
_DATE = re.compile(
    r"\b(1[0-9]{3}|20[0-9]{2}|[0-9]{1,2}(st|nd|rd|th) century|january|february|march|april|may"
    r"|june|july|august|september|october|november|december)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty"
    r"|fifty|hundred|thousand|million|billion|dozen|half)\b",
    re.IGNORECASE,
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
class Highlight:
    """A sentence likely to hold the answer (`start`, `end`) and its context: the sentence
    before and after it in its paragraph (`before`, `after` are the context's offsets)."""

    start: int
    end: int
    score: float  # its own BM25 and its passage's share
    before: int
    after: int
    own: float = 0.0  # its own BM25: a highlight shares a term with the question
    meaning: float = 0.0  # its similarity with the question (the reading model's), if judged

    def text(self, whole: str) -> str:
        return whole[self.start : self.end]

    def context(self, whole: str) -> str:
        return whole[self.before : self.after]


@dataclass(frozen=True)
class Selection:
    """What a read keeps of a page's text for a question.

    `text` is what the envelope carries (within the budget); `passages` are the kept spans,
    in page order (the lead first when there is one); `best` is the highest-scored one, the
    one the stage highlights; `focused` is False when the text is the page's opening (no
    question, a text that fits, or nothing scored). `highlights` are the best few sentences
    (with their context), best first; `confidence` how much of the question the best of them
    covers (0 to 1).
    """

    text: str
    passages: tuple[Passage, ...] = ()
    best: Passage | None = None
    whole_chars: int = 0
    focused: bool = False
    lead: Passage | None = None
    scored: int = 0  # passages the text was split into
    highlights: tuple[Highlight, ...] = ()
    confidence: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)
    foreign: bool = False  # asked in another language than the page's: the model chose
    lexical: float = 0.0  # the confidence from the question's words alone


# A question and texts -> the similarity of each text's meaning with the question's (the
# reading model, search/_meaning.py; given to `select`, which stays pure).
Similarity = Callable[[str, Sequence[str]], Sequence[float]]


@functools.lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    return str(_STEMMER.stemWord(word))


def tokens(text: str) -> list[str]:
    """Stems of the lowercase words of spaced scripts (question words dropped) and character
    bigrams of unspaced runs (a run of one character is itself)."""
    out: list[str] = []
    add = out.append
    for run, word in _TOKEN.findall(text.lower()):
        if word:
            if word not in _STOP:
                add(_stem(word))
        elif len(run) == 1:
            add(run)
        else:
            out.extend([run[i : i + 2] for i in range(len(run) - 1)])
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
    query = _query(question, hints)
    if not query or not passages:
        return [0.0] * len(passages)
    bags = [Counter(tokens(passage)) for passage in passages]
    return _bm25(bags, _idf(query, bags), k1, b)


def _query(question: str, hints: Sequence[str] = ()) -> dict[str, float]:
    """The question's terms (weight 1) and each hint's (HINT_WEIGHT more a hint)."""
    query: dict[str, float] = dict.fromkeys(tokens(question), 1.0)
    for hint in hints:
        for term in set(tokens(hint)):
            query[term] = query.get(term, 0.0) + HINT_WEIGHT
    return query


def _idf(query: dict[str, float], bags: Sequence[Counter[str]]) -> dict[str, float]:
    """Each query term's weight times its BM25 idf in the collection (terms it has)."""
    count = len(bags)
    out: dict[str, float] = {}
    for term, weight in query.items():
        df = sum(1 for bag in bags if term in bag)
        if df:
            out[term] = weight * math.log(1.0 + (count - df + 0.5) / (df + 0.5))
    return out


def _bm25(bags: Sequence[Counter[str]], idf: dict[str, float], k1: float, b: float) -> list[float]:
    lengths = [sum(bag.values()) for bag in bags]
    average = (sum(lengths) / len(lengths)) or 1.0
    scores = []
    for bag, length in zip(bags, lengths, strict=True):
        norm = k1 * (1.0 - b + b * length / average)
        score = 0.0
        for term, weight in idf.items():
            tf = bag.get(term)
            if tf:
                score += weight * tf * (k1 + 1.0) / (tf + norm)
        scores.append(score)
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
    meaning: Similarity | None = None,
) -> Selection:
    """The passages of `text` that answer `question`, within `budget` characters.

    A text that fits is returned whole, and one with no question (or where nothing scores)
    is cut to its opening; both unfocused. A text that fits still says which of its
    passages answers best (`best`, `passages`: all of them), for the stage to show, and
    every read with a question that scores names its `highlights` and `confidence`. With a
    `meaning` (the reading model), passages and sentences are ranked by BM25 and meaning
    together."""
    whole = len(text)
    if not question or not question.strip():
        return Selection(text=opening(text, budget), whole_chars=whole)
    window = max(160, min(WINDOW_MAX, int(budget * WINDOW_SHARE)))
    passages = split_passages(text, window)
    query = _query(question, hints)
    bags = [Counter(tokens(p.text(text))) for p in passages]
    idf = _idf(query, bags)
    scores = _bm25(bags, idf, K1, B) if query else [0.0] * len(passages)
    understood: dict[tuple[int, int], float] = {}
    foreign = False
    if meaning is not None and query and passages:
        foreign = _foreign(question, text)
        scores, understood = _understand(text, passages, scores, question, meaning, foreign)
    scored = [Passage(p.start, p.end, s) for p, s in zip(passages, scores, strict=True)]
    top = max(scored, key=lambda p: p.score, default=None)
    if top is None or top.score <= 0.0:
        return Selection(text=opening(text, budget), whole_chars=whole, scored=len(scored))
    ranked = _ranked_sentences(text, scored, idf, question, understood)
    highlights = tuple([h for h in ranked if _highlight(h)][:HIGHLIGHTS])
    asked = _asked_only(text, passages, bags, question, highlights, hints, understood)
    lexical = _confidence(text, asked, question, bags)
    found = Selection(
        text=text,
        passages=tuple(scored),
        best=top,
        whole_chars=whole,
        scored=len(scored),
        highlights=highlights,
        confidence=_fused_confidence(lexical, asked, bool(understood), foreign),
        foreign=foreign,
        lexical=lexical,
    )
    if whole <= budget:
        return found
    lead = _lead(text, scored[0], budget)
    if budget <= SENTENCE_BUDGET:
        chosen, lead = _fill_sentences(text, ranked, lead, budget)
    else:
        chosen, lead = _fill(text, scored, lead, budget)
    body, kept = _render(text, chosen, lead)
    best = max((p for p in chosen if p is not lead), key=lambda p: p.score, default=None)
    return replace(found, text=body, passages=tuple(kept), best=best, focused=True, lead=lead)


def _asked_only(
    text: str,
    passages: Sequence[Passage],
    bags: Sequence[Counter[str]],
    question: str,
    highlights: tuple[Highlight, ...],
    hints: Sequence[str],
    understood: dict[tuple[int, int], float] | None = None,
) -> tuple[Highlight, ...]:
    """The best sentences for the question alone: the highlights, unless hints (a snippet's
    words, which help find the passage to show) chose them; then they are ranked again
    without the hints, so that the confidence is the page's against the question, the same
    whether the page is read from a search (with its snippet) or unseen (without one)."""
    if not hints:
        return highlights
    idf = _idf(_query(question), bags)
    scores = _bm25(bags, idf, K1, B) if idf else [0.0] * len(passages)
    if max(scores, default=0.0) <= 0.0:
        return ()
    scored = [Passage(p.start, p.end, s) for p, s in zip(passages, scores, strict=True)]
    ranked = _ranked_sentences(text, scored, idf, question, understood)
    return tuple([h for h in ranked if _highlight(h)][:HIGHLIGHTS])


def _highlight(h: Highlight) -> bool:
    """A sentence shares a term with the question, or the model finds it close in meaning."""
    return h.own > 0.0 or h.meaning >= MEANING_HIGHLIGHT


def _foreign(question: str, text: str) -> bool:
    """Whether the question is asked in another language than the page's. Unspaced scripts
    by script: a question in Hangul, kana or Han on a page with little of it (under
    FOREIGN_SCRIPT of its letters). Spaced ones by words: under FOREIGN_COVERAGE of the
    question's words, its function words included, anywhere in the page."""
    letters = [c for c in question if c.isalpha()]
    if not letters:
        return False
    sample = text[:20000]
    page_letters = sum(1 for c in sample if c.isalpha()) or 1
    asked_unspaced = sum(1 for c in letters if _UNSPACED_CHAR.match(c))
    if asked_unspaced * 2 >= len(letters):
        script = next((pattern for pattern in _SCRIPT_CLASSES if pattern.search(question)), _HAN)
        return len(script.findall(sample)) < FOREIGN_SCRIPT * page_letters
    if len(_UNSPACED_CHAR.findall(sample)) * 2 >= page_letters:
        return True  # a question in a spaced script on a page in an unspaced one
    asked = [word for _, word in _TOKEN.findall(question.lower()) if word]
    if not asked:
        return False
    lowered = text.lower()
    held = sum(
        1
        for term in asked
        if (
            re.search(rf"(?<![^\W_]){re.escape(term)}(?![^\W_])", lowered)
            if term.isascii()
            else term in lowered
        )
    )
    return held / len(asked) < FOREIGN_COVERAGE


def _understand(
    text: str,
    passages: Sequence[Passage],
    scores: list[float],
    question: str,
    meaning: Similarity,
    foreign: bool,
) -> tuple[list[float], dict[tuple[int, int], float]]:
    """BM25 and meaning fused: the sentences of the MODEL_POOL best passages (for a foreign
    question, then every passage in page order), up to MODEL_CHARS (FOREIGN_CHARS)
    characters, compared with the question; each passage's score over the page's best plus
    the weight times its best sentence's similarity. Returns the fused scores and each
    compared sentence's similarity."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    picked = [i for i in order[:MODEL_POOL] if scores[i] > 0.0]
    if foreign:
        chosen = set(picked)
        picked += [i for i in range(len(passages)) if i not in chosen]
    room = FOREIGN_CHARS if foreign else MODEL_CHARS
    spans: list[tuple[int, int, int]] = []
    for i in picked:
        for first, last in sentences(text, passages[i].start, passages[i].end):
            if room <= 0:
                break
            spans.append((first, last, i))
            room -= _cost(text, first, min(last, first + 300))
    if not spans:
        return scores, {}
    similar = meaning(question, [text[first:last] for first, last, _ in spans])
    best: dict[int, float] = {}
    understood: dict[tuple[int, int], float] = {}
    for (first, last, i), value in zip(spans, similar, strict=True):
        understood[(first, last)] = float(value)
        best[i] = max(best.get(i, 0.0), float(value))
    top = max(scores) or 1.0
    weight, floor = (FOREIGN_WEIGHT, MEANING_FLOOR) if foreign else (MODEL_WEIGHT, 0.0)
    fused = [s / top + weight * max(0.0, best.get(i, 0.0) - floor) for i, s in enumerate(scores)]
    return fused, understood


def _cost(text: str, start: int, end: int) -> int:
    """What embedding `text[start:end]` costs, in characters of a spaced script: the model's
    cost is per token, about four such characters, and about one character of Han, kana or
    Hangul (a Chinese sentence costs the model four times an English one of its length)."""
    unspaced = len(_UNSPACED_CHAR.findall(text, start, end))
    return end - start + 3 * unspaced


def _fused_confidence(
    lexical: float, highlights: Sequence[Highlight], judged: bool, foreign: bool
) -> float:
    """The lexical confidence, with CONFIDENCE_MODEL of the model's (all of it for a foreign
    question) when the model judged the sentences."""
    if not judged:
        return lexical
    best = max((h.meaning for h in highlights), default=0.0)
    model = min(1.0, max(0.0, (best - MEANING_FLOOR) / (MEANING_FULL - MEANING_FLOOR)))
    share = 1.0 if foreign else CONFIDENCE_MODEL
    return round((1.0 - share) * lexical + share * model, 3)


def sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The sentences of `text[start:end]` as offsets, trailing spaces left out."""
    cuts = [start]
    cuts.extend(m.end() for m in _SENTENCE_END.finditer(text, start, end) if m.end() < end)
    cuts.append(end)
    out = []
    for first, cut in itertools.pairwise(cuts):
        last = _rstrip(text, first, cut)
        if last > first:
            out.append((first, last))
    return out


def _paragraph(text: str, at: int) -> tuple[int, int]:
    """The line `at` is in, without its surrounding spaces."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    while start < end and text[start].isspace():
        start += 1
    return start, _rstrip(text, start, end)


def _ranked_sentences(
    text: str,
    scored: list[Passage],
    idf: dict[str, float],
    question: str = "",
    understood: dict[tuple[int, int], float] | None = None,
) -> list[Highlight]:
    """The sentences of the SENTENCE_POOL best passages, best first: each one's BM25 among
    them (the page's idf) plus PASSAGE_WEIGHT times its passage's score, plus its phrases of
    the question, times the answer kind's bonus, with its neighbours in its paragraph as
    context; with the model's similarities (`understood`), each sentence's lexical score over
    the best one's plus SENTENCE_MODEL_WEIGHT times its similarity."""
    pool = sorted((p for p in scored if p.score > 0.0), key=lambda p: (-p.score, p.start))
    spans: list[tuple[int, int, int, int, float]] = []
    paragraphs: dict[int, list[tuple[int, int]]] = {}
    for passage in pool[:SENTENCE_POOL]:
        start, end = _paragraph(text, passage.start)
        own = paragraphs.get(start)
        if own is None:
            own = paragraphs[start] = sentences(text, start, end)
        for i, (first, last) in enumerate(own):
            if passage.start <= first and last <= passage.end:
                before = own[i - 1][0] if i else first
                after = own[i + 1][1] if i + 1 < len(own) else last
                spans.append((first, last, before, after, passage.score))
    lists = [tokens(text[first:last]) for first, last, *_ in spans]
    own_scores = _bm25([Counter(t) for t in lists], idf, K1, B)
    pairs = _phrases(question, idf)
    kind = _answer_kind(question)
    ranked = []
    for (first, last, before, after, score), own_score, words in zip(
        spans, own_scores, lists, strict=True
    ):
        total = own_score + PASSAGE_WEIGHT * score
        if pairs:
            found = set(itertools.pairwise(words))
            total += PHRASE_WEIGHT * sum(w for pair, w in pairs.items() if pair in found)
        if kind is not None and kind.search(text, first, last):
            total *= 1.0 + ANSWER_KIND_BONUS
        ranked.append(Highlight(first, last, total, before, after, own_score))
    if understood:
        ranked = _with_meaning(ranked, understood)
    ranked.sort(key=lambda h: (-h.score, h.start))
    return ranked


def _with_meaning(
    ranked: list[Highlight], understood: dict[tuple[int, int], float]
) -> list[Highlight]:
    """Each sentence's lexical score over the best one's plus SENTENCE_MODEL_WEIGHT times its
    similarity with the question (0 for a sentence the model did not judge)."""
    top = max((h.score for h in ranked), default=0.0) or 1.0
    out = []
    for h in ranked:
        value = understood.get((h.start, h.end), 0.0)
        score = h.score / top + SENTENCE_MODEL_WEIGHT * max(0.0, value)
        out.append(replace(h, score=score, meaning=value))
    return out


def _phrases(question: str, idf: dict[str, float]) -> dict[tuple[str, str], float]:
    """The question's pairs of neighbouring terms (question words left out between them),
    each with its mean idf."""
    asked = [t for t in tokens(question) if t in idf]
    return {(a, b): (idf[a] + idf[b]) / 2 for a, b in itertools.pairwise(asked) if a != b}


def _answer_kind(question: str) -> re.Pattern[str] | None:
    """What a sentence holding the answer to an English question holds: a date, a number
    (or anything: none)."""
    if _ASKS_DATE.search(question):
        return _DATE
    if _ASKS_NUMBER.search(question):
        return _NUMBER
    return None


def _confidence(
    text: str, highlights: Sequence[Highlight], question: str, bags: Sequence[Counter[str]]
) -> float:
    """Whether the page answers the question, 0 to 1, from its own best sentences: how much
    of the question (its terms weighted by idf in the page, a term the page lacks weighing
    most) the best highlight's context holds (CONFIDENCE_TERMS of it), and how many of the
    question's neighbouring term pairs stand near each other there (the rest). Question
    words of unspaced scripts (何, 什么, 누구, particles) are no evidence either way."""
    asked = _asked(question)
    count = len(bags)
    weights = {
        term: math.log(1.0 + (count - df + 0.5) / (df + 0.5))
        for term in set(asked)
        for df in [sum(1 for bag in bags if term in bag)]
    }
    total = sum(weights.values())
    if not total:
        return 0.0
    pairs = [(a, b) for a, b in itertools.pairwise(asked) if a != b]
    best = 0.0
    for highlight in highlights:
        words = tokens(highlight.context(text))
        present = set(words)
        score = sum(w for term, w in weights.items() if term in present) / total
        if pairs:
            near = _near_pairs(words)
            held = sum(1 for pair in pairs if pair in near) / len(pairs)
            score = CONFIDENCE_TERMS * score + (1.0 - CONFIDENCE_TERMS) * held
        best = max(best, score)
    return round(best, 3)


def _asked(question: str) -> list[str]:
    """The question's terms in order, without the question words of unspaced scripts."""
    return [t for t in tokens(question) if not _ASKING.search(t) and t not in _ASKING_WORDS]


def _near_pairs(words: Sequence[str], reach: int = PAIR_REACH) -> set[tuple[str, str]]:
    """Pairs of terms at most `reach` apart, in either order."""
    near: set[tuple[str, str]] = set()
    for i, first in enumerate(words):
        for second in words[i + 1 : i + 1 + reach]:
            near.add((first, second))
            near.add((second, first))
    return near


def _fill_sentences(
    text: str, ranked: list[Highlight], lead: Passage | None, budget: int
) -> tuple[list[Passage], Passage | None]:
    """The best sentences that fit, best first, each with the sentence before and after it
    (or the one after, or the one before, or none, as room allows), merged where they
    touch; the lead is dropped when a kept span holds it."""
    chosen: list[Passage] = []
    used = len(_render(text, chosen, lead)[0])
    for s in ranked:
        if s.score <= 0.0 or budget - used < 2:
            break
        for start, end in (
            (s.before, s.after),
            (s.start, s.after),
            (s.before, s.end),
            (s.start, s.end),
        ):
            if _covered(Passage(start, end), chosen):
                break
            # A sentence is kept whole or not at all: a span adds at most its length.
            if end - start > budget - used and not _touches(start, end, chosen):
                continue
            trial = _merge(text, [*chosen, Passage(start, end, s.score)])
            length = len(_render(text, trial, lead)[0])
            if length <= budget:
                chosen, used = trial, length
                break
    if lead is not None and _covered(lead, chosen):
        lead = None
    return chosen, lead


def _touches(start: int, end: int, chosen: list[Passage]) -> bool:
    return any(p.start <= end and start <= p.end for p in chosen)


def _merge(text: str, spans: list[Passage]) -> list[Passage]:
    """Spans in page order, those that overlap or are parted by spaces inside a paragraph
    joined into one (the higher score kept)."""
    out: list[Passage] = []
    for span in sorted(spans, key=lambda p: p.start):
        if out and (span.start <= out[-1].end or _blank(text, out[-1].end, span.start)):
            last = out[-1]
            out[-1] = Passage(last.start, max(last.end, span.end), max(last.score, span.score))
        else:
            out.append(span)
    return out


def _blank(text: str, start: int, end: int) -> bool:
    """Whether only spaces (no line break) part `start` from `end`."""
    between = text[start:end]
    return not between.strip() and "\n" not in between


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
