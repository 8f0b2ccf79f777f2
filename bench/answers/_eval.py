"""What each reader hands the brain, and whether the answer is in it.

A question counts as answered when its answer, with up to `CONTEXT` characters either side
(clipped to its paragraph), is in the reader's text, whitespace ignored: the answer in its
own context, not a stray copy of the same word elsewhere. Three readers: the opening (the
extracted text's first `budget` characters, as reads work today), plain BM25 over the
page's paragraphs (character bigrams, whole paragraphs in page order, no lead, no tuning),
and the new read (`select` of the passage module under test); with `--model`, the new read
with the reading model too (`model`: search/_meaning.py's similarity, fused with BM25).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import math
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from bench.answers._data import Article, Question, QuestionSet
from bench.answers._pages import build_page, page_path

__all__ = [
    "CONTEXT",
    "MODEL",
    "READERS",
    "Item",
    "Meaning",
    "Page",
    "Tally",
    "hits",
    "load_passages",
    "needle",
    "normalise",
    "plain_bm25",
    "prepare",
    "question_kind",
    "read_with",
    "tally",
    "thin",
    "timed_select",
]

CONTEXT = 8  # characters of the answer's own paragraph on each side
READERS = ("opening", "bm25", "new")
MODEL = "model"  # the new read with the reading model (--model)
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    return _SPACE.sub("", text)


def needle(paragraph: str, question: Question, context: int = CONTEXT) -> str:
    """The answer with `context` characters either side, clipped to its paragraph."""
    lo = max(0, question.start - context)
    hi = min(len(paragraph), question.start + len(question.answer) + context)
    return normalise(paragraph[lo:hi])


@dataclass
class Page:
    """A built page, the text extraction gives of it, and its questions."""

    language: str
    article: Article
    path: str
    html: str
    text: str = ""


@dataclass(frozen=True)
class Item:
    """One question on one page, with what must be found and whether extraction kept it."""

    page: int
    language: str
    question: str
    answer: str
    needle: str
    survived: bool
    paragraph: int
    qid: str = ""


def prepare(
    sets: Iterable[QuestionSet], *, extract: bool = True, origin: str = "https://127.0.0.1"
) -> tuple[list[Page], list[Item]]:
    """Build every article's page and (when `extract`) run `extract_article` on it, as a
    read does; one `Item` per question."""
    from search.parsers.article import extract_article

    pages: list[Page] = []
    items: list[Item] = []
    for qset in sets:
        for article in qset.articles:
            path = page_path(article, len(pages))
            page = Page(qset.language, article, path, build_page(article))
            if extract:
                page.text = extract_article(page.html, origin + path).text.strip()
            flat = normalise(page.text)
            for index, question in article.questions():
                mark = needle(article.paragraphs[index].text, question)
                items.append(
                    Item(
                        len(pages),
                        qset.language,
                        question.text,
                        question.answer,
                        mark,
                        mark in flat,
                        index,
                        question.qid,
                    )
                )
            pages.append(page)
    return pages, items


# -- the readers --------------------------------------------------------------------------------


def _bigrams(text: str) -> list[str]:
    flat = normalise(text.lower())
    return [flat[i : i + 2] for i in range(len(flat) - 1)]


@dataclass(frozen=True)
class _Index:
    """A page's paragraphs as bigram bags, with their document frequencies (built once a
    page: BM25 scores a page's paragraphs for each of its many questions)."""

    paragraphs: tuple[str, ...]
    bags: tuple[Counter[str], ...]
    norms: tuple[float, ...]
    df: Counter[str]


@functools.lru_cache(maxsize=64)
def _index(text: str) -> _Index:
    paragraphs = tuple(p for p in text.split("\n") if p.strip())
    bags = tuple(Counter(_bigrams(p)) for p in paragraphs)
    lengths = [sum(b.values()) for b in bags]
    average = (sum(lengths) / len(lengths)) or 1.0
    norms = tuple(1.2 * (0.25 + 0.75 * n / average) for n in lengths)
    df: Counter[str] = Counter()
    for bag in bags:
        df.update(bag.keys())
    return _Index(paragraphs, bags, norms, df)


def plain_bm25(text: str, question: str, budget: int) -> str:
    """Whole paragraphs (the text's lines) by character-bigram BM25 (k1 1.2, b 0.75), best
    first while they fit, given in page order; a text that fits is given whole."""
    if len(text) <= budget:
        return text
    index = _index(text)
    count = len(index.bags)
    scores = [0.0] * count
    for term in set(_bigrams(question)):
        df = index.df.get(term, 0)
        if not df:
            continue
        idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
        for i, bag in enumerate(index.bags):
            tf = bag.get(term, 0)
            if tf:
                scores[i] += idf * tf * 2.2 / (tf + index.norms[i])
    kept, used = [], 0
    for i in sorted(range(count), key=lambda i: -scores[i]):
        if used + len(index.paragraphs[i]) + 1 <= budget:
            kept.append(i)
            used += len(index.paragraphs[i]) + 1
    return "\n".join(index.paragraphs[i] for i in sorted(kept))


def load_passages(path: Path | None = None) -> ModuleType:
    """The passage module under test: `search._passages`, or the .py file at `path` (a
    variant to compare, loaded under its own name)."""
    if path is None:
        return importlib.import_module("search._passages")
    if not path.is_file():
        raise FileNotFoundError(f"--passages {path}: no such file")
    spec = importlib.util.spec_from_file_location("_bench_passages", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} cannot be imported as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


class Meaning:
    """The reading model's similarity for the bench: each sentence's vector kept (a page's
    sentences are compared with each of its many questions, and again for every setting a
    cross-validation tries), the time of the model's own work counted."""

    def __init__(self) -> None:
        from search import _meaning

        model = _meaning._load()
        if model is None:
            raise ImportError(_meaning.MISSING)
        self._model: Any = model
        self._chars = _meaning.SENTENCE_CHARS
        self._vectors: dict[str, Any] = {}
        self._questions: dict[str, Any] = {}

    def __call__(self, question: str, texts: Sequence[str]) -> list[float]:
        todo = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if todo:
            for text, vector in zip(
                todo, self._model.encode([t[: self._chars] for t in todo]), strict=True
            ):
                self._vectors[text] = vector
        asked = self._questions.get(question)
        if asked is None:
            asked = self._questions[question] = self._model.encode([question])[0]
        return [float(self._vectors[t] @ asked) for t in texts]


def read_with(
    reader: str, passages: ModuleType | None, meaning: Meaning | None = None
) -> Callable[[str, str, int], str]:
    if reader == MODEL:
        assert passages is not None and meaning is not None
        return lambda text, question, budget: str(
            passages.select(text, question, budget, meaning=meaning).text
        )
    if reader == "opening":
        return lambda text, question, budget: text[:budget]
    if reader == "bm25":
        return plain_bm25
    assert passages is not None
    return lambda text, question, budget: str(passages.select(text, question, budget).text)


def hits(
    pages: Sequence[Page],
    items: Sequence[Item],
    budget: int,
    reader: Callable[[str, str, int], str],
) -> list[bool]:
    """For each item, whether `reader`'s text for its page and question holds its needle."""
    return [
        item.needle in normalise(reader(pages[item.page].text, item.question, budget))
        for item in items
    ]


def timed_select(
    passages: ModuleType,
    pages: Sequence[Page],
    items: Sequence[Item],
    budget: int,
    meaning: Callable[[str, Sequence[str]], list[float]] | None = None,
) -> tuple[list[float], list[float], list[bool]]:
    """Milliseconds per `select` call with the item's question (and `meaning`: the reading
    model, uncached) and with none (today's read) on its page, and whether the page is
    longer than the budget."""
    with_q, without, longer = [], [], []
    extra = {"meaning": meaning} if meaning is not None else {}
    for item in items:
        text = pages[item.page].text
        started = time.perf_counter()
        passages.select(text, item.question, budget, **extra)
        middle = time.perf_counter()
        passages.select(text, None, budget)
        with_q.append((middle - started) * 1000)
        without.append((time.perf_counter() - middle) * 1000)
        longer.append(len(text) > budget)
    return with_q, without, longer


def thin(items: list[Item], per_page: int) -> list[Item]:
    """At most `per_page` questions of each page, spread over the page (deterministic)."""
    if per_page <= 0:
        return items
    by_page: dict[int, list[Item]] = {}
    for item in items:
        by_page.setdefault(item.page, []).append(item)
    out = []
    for group in by_page.values():
        step = max(1, len(group) // per_page)
        out.extend(group[::step][:per_page])
    return out


# -- tallies ------------------------------------------------------------------------------------


@dataclass
class Tally:
    """Hits per reader over a group of items."""

    total: int = 0
    found: Counter[str] = field(default_factory=Counter)

    def share(self, reader: str) -> float:
        return 100.0 * self.found[reader] / self.total if self.total else float("nan")


def tally(items: Sequence[Item], results: dict[str, list[bool]], keep: Sequence[bool]) -> Tally:
    out = Tally()
    for i, wanted in enumerate(keep):
        if not wanted:
            continue
        out.total += 1
        for reader, found in results.items():
            out.found[reader] += found[i]
    return out


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


# -- what kind of question ----------------------------------------------------------------------

_KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "when",
        (
            "when",
            "what year",
            "which year",
            "いつ",
            "何年",
            "언제",
            "몇 년",
            "何时",
            "哪一年",
            "哪年",
        ),
    ),
    (
        "how many/much",
        ("how many", "how much", "いくつ", "何人", "何個", "몇", "얼마", "多少", "几"),
    ),
    ("who", ("who", "whom", "whose", "誰", "だれ", "누구", "누가", "谁")),
    ("where", ("where", "どこ", "어디", "哪里", "在哪")),
    (
        "why/how",
        ("why", "how ", "なぜ", "どうして", "どのよう", "왜", "어떻게", "为什么", "如何", "怎么"),
    ),
    ("which/what", ("which", "what", "何", "どの", "무엇", "무슨", "어느", "어떤", "什么", "哪")),
)


def question_kind(item: Item) -> str:
    """A coarse type from the question's words (any of the four languages)."""
    lowered = item.question.lower()
    for kind, words in _KINDS:
        if any(w in lowered for w in words):
            return kind
    return "other"


def grid_values(module: ModuleType, grid: dict[str, Sequence[Any]]) -> dict[str, Sequence[Any]]:
    """The grid's settings that the module has (others are left out, and said so)."""
    return {name: values for name, values in grid.items() if hasattr(module, name)}
