"""Article extraction benchmark: plain `trafilatura.extract(html)` against `extract_article`.

Usage: python bench/extract.py FIXTURES_DIR [--sweep]
FIXTURES_DIR holds `scrapinghub-aeb/` (html/*.html.gz + ground-truth.json) and optionally
`trafilatura-eval/` (html/* + evaldata.json); tests/fixtures/articles has a small subset.
scrapinghub metric (its evaluate.py): word-4-gram shingle TP/FP/FN normalised per document,
summed, precision/recall over the sums, F1 their harmonic mean. trafilatura-eval: "with"
segments found (recall) and "without" segments wrongly kept (precision). `--sweep` also scores
trafilatura setting variants, which is how `EXTRACT_OPTIONS` was chosen.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from statistics import median
from typing import Any

import trafilatura

from search.parsers.article import EXTRACT_OPTIONS, extract_article

Extractor = Callable[[str], str]
_TOKEN = re.compile(r"\w+", re.UNICODE)


def read_text(path: Path) -> str:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def shingles(text: str, n: int = 4) -> Counter[str]:
    tokens = _TOKEN.findall(text or "")
    return Counter(" ".join(tokens[i:i + n]) for i in range(max(1, len(tokens) - n + 1)))


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


def load_aeb(root: Path) -> list[tuple[str, str, str]]:
    """(id, html, articleBody) for every page of the folder that has ground truth."""
    truth = json.loads((root / "ground-truth.json").read_text())
    pages = []
    for path in sorted((root / "html").iterdir()):
        key = path.name.split(".")[0]
        if key in truth:
            pages.append((key, read_text(path), truth[key]["articleBody"]))
    return pages


def score_aeb(pages: list[tuple[str, str, str]], extractor: Extractor) -> dict[str, Any]:
    tp = fp = fn = 0.0
    times: list[tuple[int, float]] = []
    for _key, html, body in pages:
        started = time.perf_counter()
        text = extractor(html)
        times.append((len(html), (time.perf_counter() - started) * 1000))
        a, b, c = shingle_match(body, text)
        tp, fp, fn = tp + a, fp + b, fn + c
    precision, recall, f1 = prf(tp, fp, fn)
    largest = [ms for _size, ms in sorted(times, reverse=True)[:10]]
    return {"precision": precision, "recall": recall, "f1": f1,
            "median_ms": median(largest), "max_ms": max(largest)}


def score_segments(root: Path, extractor: Extractor) -> dict[str, Any]:
    """trafilatura's own evaluation: segments that must (with) or must not (without) be kept."""
    data = json.loads((root / "evaldata.json").read_text())
    files = {p.name.removesuffix(".gz"): p for p in (root / "html").iterdir()}
    tp = fn = fp = tn = 0
    for entry in data.values():
        path = files.get(entry["file"])
        if path is None:
            continue
        text = " ".join(extractor(read_text(path)).split())
        for segment in entry.get("with", []):
            found = " ".join(segment.split()) in text
            tp, fn = tp + found, fn + (not found)
        for segment in entry.get("without", []):
            kept = " ".join(segment.split()) in text
            fp, tn = fp + kept, tn + (not kept)
    precision, recall, f1 = prf(tp, fp, fn)
    accuracy = (tp + tn) / max(1, tp + tn + fp + fn)
    return {"precision": precision, "recall": recall, "f1": f1, "accuracy": accuracy}


def plain(html: str) -> str:
    return trafilatura.extract(html) or ""


def ours(html: str) -> str:
    return extract_article(html).text


def variant(**changes: Any) -> Extractor:
    options = {**EXTRACT_OPTIONS, **changes}

    def run(html: str) -> str:
        doc = trafilatura.bare_extraction(html, with_metadata=False, **options)
        return (doc.as_dict().get("text") or "") if doc is not None else ""

    return run


VARIANTS: dict[str, Extractor] = {
    "favor_precision_off": variant(favor_precision=False),
    "favor_recall": variant(favor_recall=True, favor_precision=False),
    "no_tables": variant(include_tables=False),
    "deduplicate": variant(deduplicate=True),
    "fast": variant(fast=True),
    "with_comments": variant(include_comments=True),
}


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    root = Path(argv[0])
    extractors: dict[str, Extractor] = {"trafilatura.extract (plain)": plain, "ours": ours}
    if "--sweep" in argv:
        extractors.update(VARIANTS)
    pages = load_aeb(root / "scrapinghub-aeb")
    print(f"scrapinghub-aeb: {len(pages)} pages (ms over the 10 largest pages)")
    print(f"{'extractor':30} {'precision':>9} {'recall':>7} {'F1':>6} {'med ms':>7} {'max ms':>7}")
    for name, extractor in extractors.items():
        r = score_aeb(pages, extractor)
        print(f"{name:30} {r['precision']:9.3f} {r['recall']:7.3f} {r['f1']:6.3f} "
              f"{r['median_ms']:7.0f} {r['max_ms']:7.0f}")
    segments = root / "trafilatura-eval"
    if (segments / "evaldata.json").exists():
        print("\ntrafilatura-eval (with/without segments)")
        print(f"{'extractor':30} {'precision':>9} {'recall':>7} {'F1':>6} {'acc':>6}")
        for name, extractor in extractors.items():
            r = score_segments(segments, extractor)
            print(f"{name:30} {r['precision']:9.3f} {r['recall']:7.3f} {r['f1']:6.3f} "
                  f"{r['accuracy']:6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
