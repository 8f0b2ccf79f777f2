"""Article extraction benchmark: plain `trafilatura.extract(html)` against `extract_article`.

Usage: python -m bench.extract [FIXTURES_DIR] [--folds 3] [--seed 7] [--readability DIR]
                               [--held-out DIR]
FIXTURES_DIR (default ../shared/fixtures/articles when present, else the compact subset in
tests/fixtures/articles) holds `scrapinghub-aeb/` (html/*.html.gz + ground-truth.json) and
optionally `trafilatura-eval/` (html/* + evaldata.json) and `readability/` (<page>/source.html
and expected.html, either gzipped).

scrapinghub metric (its evaluate.py): word-4-gram shingle TP/FP/FN normalised per document,
summed, precision/recall over the sums, F1 their harmonic mean. Beside it, ROUGE-LSum F1 (the
metric of news-extraction papers, rouge-score's, averaged over pages; `rouge_lsum`), per set,
cross-validated and by the page's declared language. trafilatura-eval: "with" segments found
(recall) and "without" segments wrongly kept (precision). Last, every development page is
timed with `extract_article` and plain `trafilatura.extract` one after the other: median,
p90 and max of each, their ratios, and the pages slowest against 2x plain + 50 ms
(`--time-pages N` times the first N only).

How the read path's settings are chosen, and how honestly they are scored. The development
pages are the scrapinghub development third, mozilla/readability's test pages
(`test/test-pages`: real pages with the article text its maintainers expect, those of 150
words or more) and the article pages of WCXB's dev split (Murrough-Foley/
web-content-extraction-benchmark, `main_content` ground truth). The scrapinghub pages alone
lose almost nothing to precision mode (recall 0.990), so they cannot tell a recall rule's
candidates apart. Four readability pages are committed (tests/fixtures/articles/readability,
read when FIXTURES_DIR has `readability/`); `--readability DIR` gives the whole suite and
`--wcxb DIR` adds WCXB (its test-split articles are then scored as held out).

Every candidate (the share of the recall pass's words under which the precision pass is too
thin to keep) is computed from two cached trafilatura passes per page. K-fold
cross-validation picks the best candidate on K-1 folds (the mean of each development set's
F1; the simplest within MARGIN of the best) and scores it on the fold it never saw; the mean
and spread of those scores estimate F1 on unseen pages. The constant in
search/parsers/article.py is the candidate chosen on all development pages. trafilatura's
evaluation set only breaks exact ties (two shares no development page tells apart). The
clean-up (headline and page-furniture lines) is part of the read path, not a candidate: a
voice should not read a share bar aloud whatever a benchmark's annotators counted; its effect
on each set is printed. `--held-out DIR` (a scrapinghub-aeb-shaped folder of pages the
settings never saw, such as the benchmark's pages outside the development third) scores the
shipped settings and plain trafilatura there, with no tuning at all. Each held-out score is
printed with its 95% bootstrap interval over the pages, and so is ours' lead over plain: a
target closer to the score than that interval is decided by which pages were kept aside.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lxml.html
import numpy as np
import trafilatura

from search.parsers import article as art
from search.parsers import count_words

ROOT = Path(__file__).resolve().parents[2]

SHARED = ROOT.parent / "shared" / "fixtures" / "articles"
LOCAL = ROOT / "tests" / "fixtures" / "articles"
_TOKEN = re.compile(r"\w+", re.UNICODE)
THIN_SHARES = (0.0, 0.1, 0.2, 0.3, 0.5, 1.0)  # 0: never the recall pass; 1: whenever longer
READABILITY_MIN_WORDS = 150  # shorter expected texts are the suite's unit cases, not articles


def read_text(path: Path) -> str:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def shingles(text: str, n: int = 4) -> Counter[str]:
    tokens = _TOKEN.findall(text or "")
    return Counter(" ".join(tokens[i : i + n]) for i in range(max(1, len(tokens) - n + 1)))


def shingle_match(truth: str, pred: str) -> tuple[float, float, float]:
    """(tp, fp, fn) over 4-gram shingles, normalised so that they sum to 1 per document."""
    true_s, pred_s = shingles(truth), shingles(pred)
    tp = sum((true_s & pred_s).values())
    fp = sum((pred_s - true_s).values())
    fn = sum((true_s - pred_s).values())
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def prf(tp: float, fp: float, fn: float) -> tuple[float, float, float]:
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


# -- ROUGE-LSum ---------------------------------------------------------------------------------
# The summary-level ROUGE-L of news-extraction papers (rouge-score's "rougeLsum": lines are
# sentences; each reference line's union of longest common subsequences with the candidate's
# lines, hits clipped by token counts). rouge-score's own table is pure Python, O(reference x
# candidate tokens): a second a page here. `rouge_lsum` computes the same tables a row at a time
# with numpy (the same LCS table, the same backtracking, the same union and clipping; a test
# checks it equals `rouge_score.rouge_scorer` on real pages). Tokens: rouge-score's default
# keeps only [a-z0-9], which splits "für" and drops Chinese and Japanese text whole, so each
# Chinese or Japanese character is a token and other tokens are runs of letters and digits.
_ROUGE_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\W_]+")


class RougeTokenizer:
    """rouge-score's tokenizer interface (`tokenize`), for any script."""

    def tokenize(self, text: str) -> list[str]:
        return _ROUGE_TOKEN.findall(text.lower())


def _sentences(text: str) -> list[list[str]]:
    return [RougeTokenizer().tokenize(line) for line in (text or "").split("\n") if line]


def rouge_lsum(truth: str, pred: str) -> tuple[float, float, float]:
    """(precision, recall, F1) of ROUGE-LSum, as rouge-score computes it."""
    refs, cans = _sentences(truth), _sentences(pred)
    m, n = sum(map(len, refs)), sum(map(len, cans))
    if not refs or not cans or not m or not n:
        return 0.0, 0.0, 0.0
    ids: dict[str, int] = {}
    cand = np.array([ids.setdefault(t, len(ids)) for s in cans for t in s], dtype=np.int64)
    seg = np.repeat(np.arange(len(cans)), [len(s) for s in cans])
    ends = np.cumsum([len(s) for s in cans])
    starts = ends - np.array([len(s) for s in cans])
    cnt_r, cnt_c = Counter(t for s in refs for t in s), Counter(t for s in cans for t in s)
    hits = 0
    for ref in refs:
        if not ref:
            continue
        for token in _union_lcs(ref, [ids.get(t, -1) for t in ref], cans, cand, seg, starts):
            if cnt_c[token] > 0 and cnt_r[token] > 0:
                hits += 1
                cnt_c[token] -= 1
                cnt_r[token] -= 1
    recall, precision = hits / m, hits / n
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def _union_lcs(
    ref: list[str], ref_ids: list[int], cans: list[list[str]], cand: Any, seg: Any, starts: Any
) -> list[str]:
    """The reference line's tokens in the union of one LCS with each candidate line (the one
    rouge-score's backtracking reads out), in order."""
    width = len(ref) + 1
    offset = seg * width  # each candidate line's values above every earlier line's
    table = np.zeros((len(ref) + 1, len(cand)), dtype=np.int64)
    first = np.zeros(len(cand), dtype=bool)
    first[starts[starts < len(cand)]] = True
    for i, token in enumerate(ref_ids, 1):
        above = table[i - 1]
        diagonal = np.concatenate(([0], above[:-1]))
        diagonal[first] = 0
        row = np.where(cand == token, diagonal + 1, above)
        table[i] = np.maximum.accumulate(row + offset) - offset
    found: set[int] = set()
    for k, can in enumerate(cans):
        if can and table[len(ref), starts[k] + len(can) - 1] > 0:
            found.update(_backtrack(table, ref, can, int(starts[k])))
    return [ref[i] for i in sorted(found)]


def _backtrack(table: Any, ref: list[str], can: list[str], start: int) -> list[int]:
    """rouge-score's `_backtrack_norec` on one candidate line's columns of `table`."""

    def at(i: int, j: int) -> int:
        return int(table[i, start + j - 1]) if j > 0 else 0

    i, j, lcs = len(ref), len(can), []
    while i > 0 and j > 0:
        if ref[i - 1] == can[j - 1]:
            lcs.append(i - 1)
            i, j = i - 1, j - 1
        elif at(i, j - 1) > at(i - 1, j):
            j -= 1
        else:
            i -= 1
    return lcs


# -- pages and their cached passes ----------------------------------------------------------


@dataclass
class Page:
    """One page: its HTML, its truth, and what each trafilatura pass found (cached)."""

    key: str
    html: str
    truth: str = ""  # scrapinghub and readability: the article's text
    source: str = "scrapinghub-aeb"  # the development set the page belongs to
    keep: tuple[str, ...] = ()  # trafilatura-eval: segments that must be kept
    drop: tuple[str, ...] = ()  # trafilatura-eval: segments that must not be kept
    precise: str = ""
    recall: str = ""
    words: int = 0  # the page's body words outside links (art.page_words)
    titles: tuple[str, ...] = ()
    dropped: bool = False  # art.dropped_prose: the opening rule may look at this page
    description: str | None = None
    language: str = "?"

    def passes(self) -> Page:
        data, self.words, recall = art.extraction_passes(self.html, None, opening=True, share=None)
        self.precise = data.get("text") or ""
        self.recall = recall() or ""
        self.titles = art.page_titles(data, self.html)
        self.dropped = bool(data.get("dropped_prose"))
        self.description = data.get("description")
        self.language = data.get("language") or "?"
        return self


def load_aeb(root: Path, skip: set[str] | frozenset[str] = frozenset()) -> list[Page]:
    """Every page of the folder that has ground truth (except the keys in `skip`)."""
    truth = json.loads((root / "ground-truth.json").read_text(encoding="utf-8"))
    pages = []
    for path in sorted((root / "html").iterdir()):
        key = path.name.split(".")[0]
        if key in truth and key not in skip:
            pages.append(Page(key, read_text(path), truth=truth[key]["articleBody"]))
    return pages


def load_readability(root: Path) -> list[Page]:
    """mozilla/readability's test pages (`<name>/source.html` and `expected.html`, either
    gzipped) whose expected text has READABILITY_MIN_WORDS words or more; the truth is that
    text, a line per block."""
    pages = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        expected, source = _member(folder, "expected.html"), _member(folder, "source.html")
        if expected is None or source is None:
            continue
        truth = block_text(read_text(expected))
        if count_words(truth) >= READABILITY_MIN_WORDS:
            pages.append(Page(folder.name, read_text(source), truth, source="readability"))
    return pages


def load_wcxb(root: Path, split: str) -> list[Page]:
    """The article pages of one split ("dev" or "test") of WCXB (Murrough-Foley/
    web-content-extraction-benchmark: `<split>/html/<id>.html.gz` and
    `<split>/ground-truth/<id>.json` with `ground_truth.main_content`). The page type is the
    ground truth's own (`_internal.page_type.primary`), as the benchmark's evaluate.py reads
    it."""
    pages = []
    for truth_path in sorted((root / split / "ground-truth").glob("*.json")):
        html_path = root / split / "html" / f"{truth_path.stem}.html.gz"
        data = json.loads(truth_path.read_text(encoding="utf-8"))
        kind = (data.get("_internal") or {}).get("page_type") or {}
        kind = kind.get("primary", "article") if isinstance(kind, dict) else kind
        body = (data.get("ground_truth") or {}).get("main_content") or ""
        if kind == "article" and body.strip() and html_path.is_file():
            pages.append(Page(truth_path.stem, read_text(html_path), body, source="wcxb"))
    return pages


def has_readability_pages(root: Path) -> bool:
    return root.is_dir() and any(_member(p, "expected.html") for p in root.iterdir() if p.is_dir())


def _member(folder: Path, name: str) -> Path | None:
    return next((p for p in (folder / name, folder / f"{name}.gz") if p.is_file()), None)


_BLOCKS = {"p", "div", "section", "article", "li", "dd", "dt", "blockquote", "pre", "tr"}
_BLOCKS |= {"td", "th", "table", "ul", "ol", "figcaption", "br", "h1", "h2", "h3", "h4", "h5"}


def block_text(html: str) -> str:
    """The text of an HTML fragment, a line per block element."""
    root = lxml.html.fromstring(html)
    for element in root.iter():
        if isinstance(element.tag, str) and element.tag in _BLOCKS | {"h6"}:
            element.tail = "\n" + (element.tail or "")
            if element.tag != "br":
                element.text = "\n" + (element.text or "")
    lines = (" ".join(line.split()) for line in root.text_content().splitlines())
    return "\n".join(line for line in lines if line)


def load_segments(root: Path) -> list[Page]:
    data = json.loads((root / "evaldata.json").read_text(encoding="utf-8"))
    files = {p.name.removesuffix(".gz"): p for p in (root / "html").iterdir()}
    pages = []
    for key, entry in data.items():
        path = files.get(entry["file"])
        if path is not None:
            keep, drop = tuple(entry.get("with", [])), tuple(entry.get("without", []))
            page = Page(key, read_text(path), keep=keep, drop=drop, source="trafilatura-eval")
            pages.append(page)
    return pages


# -- candidates and scores --------------------------------------------------------------------

# (clean-up on, recall pass when precision kept < this share, opening lines of this many words
# read back from the balanced pass: 0 never)
Candidate = tuple[bool, float, int]
Chooser = Callable[[Page], str]


def chooser(candidate: Candidate) -> Chooser:
    clean, share, opening = candidate

    def run(page: Page) -> str:
        text = art.combine(page.precise, page.words, lambda: page.recall, share)
        if opening and page.dropped and text == page.precise:
            text = art.keep_opening(text, page.recall, page.description, opening)
        return art.clean_text(text, page.titles) if clean else text.strip()

    return run


OPENING_WORDS = (6, 12, 20, 30)
# Simplest first: the plain precision pass, then the recall rule at each share, then each with
# the opening rule.
CANDIDATES: list[Candidate] = [(True, share, 0) for share in THIN_SHARES] + [
    (True, share, words) for share in THIN_SHARES for words in OPENING_WORDS
]
MARGIN = 0.002  # F1 differences smaller than this do not justify a more complex rule
PRODUCTION: Candidate = (True, art.THIN_SHARE, art.OPENING_MIN_WORDS)


Match = tuple[float, float, float]  # one page's (tp, fp, fn), from `shingle_match`


def matches(pages: Sequence[Page], extract: Chooser) -> list[Match]:
    return [shingle_match(page.truth, extract(page)) for page in pages]


def pooled(scored: Sequence[Match]) -> tuple[float, float, float]:
    """(precision, recall, F1) over the pages' summed matches, as the benchmark pools them."""
    tp, fp, fn = (sum(column) for column in zip(*scored, strict=True)) if scored else (0, 0, 0)
    return prf(tp, fp, fn)


def score_aeb(pages: Sequence[Page], extract: Chooser) -> tuple[float, float, float]:
    return pooled(matches(pages, extract))


def score_segments(pages: Sequence[Page], extract: Chooser) -> tuple[float, float, float]:
    """trafilatura's own evaluation: (precision, recall, F1) over kept/dropped segments."""
    tp = fn = fp = 0
    for page in pages:
        text = " ".join(extract(page).split())
        found = [" ".join(s.split()) in text for s in page.keep]
        kept = [" ".join(s.split()) in text for s in page.drop]
        tp, fn, fp = tp + sum(found), fn + found.count(False), fp + sum(kept)
    return prf(tp, fp, fn)


_ROUGE_CACHE: dict[tuple[str, str, str], float] = {}


def page_rouge(page: Page, text: str) -> float:
    """ROUGE-LSum F1 of one page's text (cached: candidates often give the same text)."""
    key = (page.source, page.key, text)
    if key not in _ROUGE_CACHE:
        _ROUGE_CACHE[key] = rouge_lsum(page.truth, text)[2]
    return _ROUGE_CACHE[key]


def score_rouge(pages: Sequence[Page], extract: Chooser) -> float:
    """ROUGE-LSum F1 averaged over the pages, as news-extraction papers report it."""
    return statistics.mean(page_rouge(p, extract(p)) for p in pages) if pages else 0.0


def development_f1(pages: Sequence[Page], extract: Chooser) -> float:
    """The mean of the F1 on each development set present (so that the larger set does not
    outvote the other)."""
    sources = sorted({page.source for page in pages})
    return statistics.mean(
        score_aeb([p for p in pages if p.source == source], extract)[2] for source in sources
    )


def _complexity(candidate: Candidate) -> int:
    return int(candidate[1] > 0) + int(candidate[2] > 0)


def best(pages: Sequence[Page], tiebreak: Sequence[Page] = ()) -> Candidate:
    """The best candidate among the simplest within MARGIN of the best F1: on a hundred
    pages a smaller difference is a page or two of noise, and the simpler rule generalises
    better. Among equally simple candidates the best F1 wins, and an exact tie (two shares
    that no development page tells apart) goes to the better one on `tiebreak` pages
    (trafilatura's evaluation set)."""
    scores = {c: development_f1(pages, chooser(c)) for c in CANDIDATES}
    top = max(scores.values())
    near = [c for c in CANDIDATES if scores[c] >= top - MARGIN]
    simplest = [c for c in near if _complexity(c) == min(map(_complexity, near))]
    if not tiebreak:
        return max(simplest, key=lambda c: scores[c])
    return max(simplest, key=lambda c: (scores[c], score_segments(tiebreak, chooser(c))[2]))


@dataclass(frozen=True)
class FoldResult:
    chosen: Candidate
    precision: float
    recall: float
    f1: float
    by_source: dict[str, float]  # F1 on the fold's pages of each development set
    rouge: float = 0.0  # ROUGE-LSum F1 on the fold's pages


def cross_validate(
    pages: Sequence[Page], folds: int, seed: int, tiebreak: Sequence[Page] = ()
) -> list[FoldResult]:
    """Choose on K-1 folds, score on the remaining one, for each fold (every fold holds a
    K-th of each development set)."""
    rng = random.Random(seed)
    order: list[Page] = []
    for source in sorted({page.source for page in pages}):
        part = [page for page in pages if page.source == source]
        rng.shuffle(part)
        order += part
    parts = [order[i::folds] for i in range(folds)]
    results = []
    for i, held in enumerate(parts):
        train = [p for j, part in enumerate(parts) if j != i for p in part]
        chosen = best(train, tiebreak)
        extract = chooser(chosen)
        by_source = {
            source: score_aeb([p for p in held if p.source == source], extract)[2]
            for source in sorted({p.source for p in held})
        }
        rouge = statistics.mean(
            score_rouge([p for p in held if p.source == source], extract) for source in by_source
        )
        results.append(FoldResult(chosen, *score_aeb(held, extract), by_source, rouge))
    return results


# -- printing ---------------------------------------------------------------------------------


def _name(candidate: Candidate) -> str:
    clean, share, opening = candidate
    recall = "never" if share == 0 else "if longer" if share >= 1 else f"if P < {share:g} of it"
    kept = f", opening lines of {opening}+ words" if opening else ", no opening rule"
    return f"recall pass {recall}{kept}" + ("" if clean else ", no clean-up")


def plain(page: Page) -> str:
    return trafilatura.extract(page.html) or ""


def ours(page: Page) -> str:
    """`extract_article(html).text`, computed from the cached passes (same functions)."""
    return chooser(PRODUCTION)(page) or art.visible_text(page.html)


def print_aeb(
    parts: dict[str, list[Page]], folds: int, seed: int, tiebreak: Sequence[Page] = ()
) -> None:
    """Plain and ours on each development set, then the cross-validation over all of them."""
    rows = (
        ("trafilatura.extract (plain)", plain),
        ("ours (extract_article)", ours),
        ("  ours without the clean-up", chooser((False, art.THIN_SHARE, art.OPENING_MIN_WORDS))),
        ("  ours without the opening rule", chooser((True, art.THIN_SHARE, 0))),
    )
    for label, part in parts.items():
        print(f"{label}: {len(part)} development pages")
        print(f"{'extractor':44} {'precision':>9} {'recall':>7} {'F1':>6} {'ROUGE-LSum':>10}")
        for name, extract in rows:
            p, r, f = score_aeb(part, extract)
            print(f"{name:44} {p:9.3f} {r:7.3f} {f:6.3f} {score_rouge(part, extract):10.4f}")
    pages = [page for part in parts.values() for page in part]
    results = cross_validate(pages, folds, seed, tiebreak)
    print(f"cross-validation over all {len(pages)} development pages")
    for i, res in enumerate(results, 1):
        print(
            f"  fold {i}: chosen on the other folds: {_name(res.chosen)}; scored on this "
            f"fold: P {res.precision:.3f} R {res.recall:.3f} F1 {res.f1:.3f} "
            f"ROUGE-LSum {res.rouge:.4f}"
        )
    f1s = [res.f1 for res in results]
    spread = statistics.pstdev(f1s) if len(f1s) > 1 else 0.0
    print(
        f"cross-validated F1 ({folds}-fold, pages the choice never saw): "
        f"{statistics.mean(f1s):.3f} ± {spread:.3f}"
    )
    rouges = [res.rouge for res in results]
    print(
        f"cross-validated ROUGE-LSum F1 (the same folds): {statistics.mean(rouges):.4f} "
        f"± {statistics.pstdev(rouges) if len(rouges) > 1 else 0.0:.4f}"
    )
    if len(parts) > 1:
        for source in sorted({page.source for page in pages}):
            scored = [res.by_source[source] for res in results if source in res.by_source]
            spread = statistics.pstdev(scored) if len(scored) > 1 else 0.0
            print(f"  on the {source} pages alone: {statistics.mean(scored):.3f} ± {spread:.3f}")
    print(
        f"chosen on all development pages: {_name(best(pages, tiebreak))}; "
        f"in search/parsers/article.py: {_name(PRODUCTION)}"
    )
    print_languages(pages)
    if len(parts) == 1:
        print(
            "  (the recall rule is chosen with --readability DIR, mozilla/readability's "
            "test/test-pages: these pages alone do not tell its candidates apart)"
        )


def print_languages(pages: Sequence[Page]) -> None:
    """ROUGE-LSum F1 of plain trafilatura and ours on the development pages of each declared
    language (`<html lang>`; "?" undeclared)."""
    print("\nROUGE-LSum F1 by the page's declared language (all development pages)")
    print(f"{'language':10} {'pages':>5} {'plain':>7} {'ours':>7} {'ours - plain':>12}")
    for language in sorted({p.language for p in pages}, key=lambda x: (x == "?", x)):
        group = [p for p in pages if p.language == language]
        base, shipped = score_rouge(group, plain), score_rouge(group, ours)
        print(f"{language:10} {len(group):5d} {base:7.4f} {shipped:7.4f} {shipped - base:+12.4f}")


def print_held_out(unseen: list[Page], heading: str) -> None:
    """Plain and ours on pages outside the development set, with how far the pages' own
    sampling moves ours and its lead over plain (`bootstrap`)."""
    print(f"\n{heading}")
    if not unseen:
        print("  no pages to score")
        return
    print(f"{'extractor':44} {'precision':>9} {'recall':>7} {'F1':>6}")
    baseline, shipped = matches(unseen, plain), matches(unseen, ours)
    for name, scored in (
        ("trafilatura.extract (plain)", baseline),
        ("ours (extract_article)", shipped),
    ):
        p, r, f = pooled(scored)
        print(f"{name:44} {p:9.3f} {r:7.3f} {f:6.3f}")
    (low, high), (lead_low, lead_high) = bootstrap(shipped, baseline)
    print(
        f"  95% interval over these pages ({BOOTSTRAP_RESAMPLES} resamples): ours "
        f"{low:.3f}-{high:.3f}; ours minus plain {lead_low:+.3f} to {lead_high:+.3f}"
    )


BOOTSTRAP_RESAMPLES = 2000


def bootstrap(
    ours: Sequence[Match], baseline: Sequence[Match], seed: int = 1
) -> tuple[tuple[float, float], tuple[float, float]]:
    """95% intervals of ours' F1 and of its lead over the baseline, resampling the pages
    (with replacement, the same pages for both): a difference inside them is the choice of
    pages, not the extractor."""
    rng = random.Random(seed)
    scores, leads = [], []
    for _ in range(BOOTSTRAP_RESAMPLES):
        picks = [rng.randrange(len(ours)) for _ in ours]
        f1 = pooled([ours[i] for i in picks])[2]
        base = pooled([baseline[i] for i in picks])[2]
        scores.append(f1)
        leads.append(f1 - base)
    cut = BOOTSTRAP_RESAMPLES // 40  # 2.5% on each side

    def interval(values: list[float]) -> tuple[float, float]:
        values.sort()
        return values[cut], values[-cut - 1]

    return interval(scores), interval(leads)


def print_segments(pages: list[Page]) -> None:
    print(f"\ntrafilatura-eval: {len(pages)} pages (with/without segments; only breaks exact ties)")
    print(f"{'extractor':44} {'precision':>9} {'recall':>7} {'F1':>6}")
    rows: list[tuple[str, Callable[[Page], str]]] = [
        ("trafilatura.extract (plain)", plain),
        ("ours (extract_article)", ours),
    ]
    rows += [
        (f"  {_name(c)}", chooser(c)) for c in ((False, 0.0, 0), (True, 0.0, 0), (True, 1.0, 0))
    ]
    for name, extract in rows:
        p, r, f = score_segments(pages, extract)
        print(f"{name:44} {p:9.3f} {r:7.3f} {f:6.3f}")


def timings(pages: Sequence[Page], rounds: int = 1) -> list[tuple[Page, float, float]]:
    """(page, plain ms, ours ms) for each page: `trafilatura.extract(html)` and
    `extract_article(html)` timed on the same page one after the other, which goes first
    alternating, each the fastest of `rounds` runs (a shared machine's noise falls on both)."""
    rows = []
    if pages:  # first calls load stop lists and compile patterns: not a page's time
        trafilatura.extract(pages[0].html)
        art.extract_article(pages[0].html)
    for i, page in enumerate(pages):
        runs: dict[str, list[float]] = {"plain": [], "ours": []}
        for j in range(rounds):
            order = ("plain", "ours") if (i + j) % 2 == 0 else ("ours", "plain")
            for name in order:
                started = time.perf_counter()
                if name == "plain":
                    trafilatura.extract(page.html)
                else:
                    art.extract_article(page.html)
                runs[name].append((time.perf_counter() - started) * 1000)
        rows.append((page, min(runs["plain"]), min(runs["ours"])))
    return rows


def p90(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


SLOW_RATIO, SLOW_EXTRA_MS = 2.0, 50.0  # no page slower than 2x plain + 50 ms
TYPICAL_RATIO = 1.3  # median and p90 at most 1.3x plain's


def print_timing(pages: Sequence[Page], rounds: int = 1, slowest: int = 8) -> None:
    """Per-page extraction time of the read path beside plain trafilatura on the same pages:
    median, p90 and max of each, their ratios, and the pages slowest against the target."""
    rows = timings(pages, rounds)
    plain_ms, ours_ms = [r[1] for r in rows], [r[2] for r in rows]
    print(f"\nextraction time per page, {len(rows)} pages (interleaved, best of {rounds})")
    print(f"{'':30} {'median':>8} {'p90':>8} {'max':>8}")
    for name, values in (
        ("trafilatura.extract (plain)", plain_ms),
        ("ours (extract_article)", ours_ms),
    ):
        print(
            f"{name:30} {statistics.median(values):6.1f}ms {p90(values):6.1f}ms "
            f"{max(values):6.0f}ms"
        )
    med = statistics.median(ours_ms) / statistics.median(plain_ms)
    tail = p90(ours_ms) / p90(plain_ms)
    over = [r for r in rows if r[2] > SLOW_RATIO * r[1] + SLOW_EXTRA_MS]
    print(
        f"ours / plain: median {med:.2f}x, p90 {tail:.2f}x (target <= {TYPICAL_RATIO}x); "
        f"median of per-page ratios {statistics.median(o / p for _, p, o in rows if p):.2f}x; "
        f"pages over {SLOW_RATIO:g}x plain + {SLOW_EXTRA_MS:g} ms: {len(over)}"
    )
    print(f"slowest against that limit: {'page':40} {'plain':>8} {'ours':>8}")
    worst = sorted(rows, key=lambda r: r[2] - SLOW_RATIO * r[1] - SLOW_EXTRA_MS)[-slowest:]
    for page, plain_t, ours_t in reversed(worst):
        label = f"{page.source}/{page.key[:24]} ({len(page.html) / 1e6:.2f} MB)"
        print(f"  {label:66} {plain_t:6.0f}ms {ours_t:6.0f}ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.extract", description=__doc__.splitlines()[0]
    )
    default = SHARED if (SHARED / "scrapinghub-aeb").is_dir() else LOCAL
    parser.add_argument("fixtures", nargs="?", type=Path, default=default)
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--readability", type=Path, metavar="DIR", help="mozilla/readability's test/test-pages"
    )
    parser.add_argument(
        "--wcxb", type=Path, metavar="DIR", help="WCXB: dev articles develop, test articles judge"
    )
    parser.add_argument("--held-out", type=Path, metavar="DIR", help="pages never tuned on")
    parser.add_argument(
        "--time-pages", type=int, default=0, metavar="N", help="time the first N pages (0: all)"
    )
    parser.add_argument(
        "--time-rounds", type=int, default=3, metavar="N", help="runs per page (the fastest counts)"
    )
    args = parser.parse_args(argv)
    root: Path = args.fixtures
    if (root / "articles").is_dir():  # the fixtures root was given
        root = root / "articles"
    if not (root / "scrapinghub-aeb" / "ground-truth.json").is_file():
        print(f"no scrapinghub-aeb/ground-truth.json under {root}", file=sys.stderr)
        return 2
    aeb = [page.passes() for page in load_aeb(root / "scrapinghub-aeb")]
    parts = {"scrapinghub-aeb": aeb}
    readability: Path = args.readability or root / "readability"
    if args.readability is not None and not has_readability_pages(readability):
        print(f"no <page>/expected.html under {readability}", file=sys.stderr)
        return 2
    if has_readability_pages(readability):
        parts["readability test pages"] = [p.passes() for p in load_readability(readability)]
    wcxb: Path | None = args.wcxb
    if wcxb is not None:
        if not (wcxb / "dev" / "ground-truth").is_dir():
            print(f"no dev/ground-truth in {wcxb}", file=sys.stderr)
            return 2
        parts["wcxb articles"] = [p.passes() for p in load_wcxb(wcxb, "dev")]
    segments: list[Page] = []
    if (root / "trafilatura-eval" / "evaldata.json").is_file():
        segments = [page.passes() for page in load_segments(root / "trafilatura-eval")]
    print_aeb(parts, args.folds, args.seed, segments)
    if segments:
        print_segments(segments)
    held_out: Path | None = args.held_out
    if held_out is not None:
        if not (held_out / "ground-truth.json").is_file():
            print(f"no ground-truth.json in {held_out}", file=sys.stderr)
            return 2
        development = {page.key for page in aeb}
        unseen = [p.passes() for p in load_aeb(held_out, skip=development)]
        print_held_out(
            unseen,
            f"scrapinghub-aeb held out: {len(unseen)} pages never tuned on "
            f"(any of the {len(development)} development pages in that folder skipped)",
        )
    if wcxb is not None:
        tested = [p.passes() for p in load_wcxb(wcxb, "test")]
        print_held_out(tested, f"wcxb held out: {len(tested)} test-split articles never tuned on")
    timed = [page for part in parts.values() for page in part] + segments
    print_timing(timed[: args.time_pages] if args.time_pages else timed, args.time_rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
