"""Agreement of the results-page parsers with the ground truth shipped beside saved pages.

Usage: python -m bench.extract.serp FIXTURES_DIR  (e.g. tests/fixtures/serp, or
tests/fixtures/serp-engines for Bing: each page goes to its engine's parser, told by the page)
       python -m bench.extract.serp --rewrites [--only NAME,...] DIR...  (each page rewritten
by each of tests/_rewrites.py's rewrites: organic recall and precision against the page's own
parse before the rewrite, the AI Overview kept, and the parses that miss more than half of
their results without saying "suspect"; per half of the pages, split by name, and together)
Per file: organic URL recall/precision against `*.expected.json` (approved parser output of the
source project, redirect wrappers removed on both sides) and the facts in
`*.expected.partial.json` (counts, titles, URLs at given indexes); then a summary per family.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
import time
from pathlib import Path
from statistics import mean, median
from typing import Any
from urllib.parse import unquote, urlsplit

from search.parsers import clean_google_url, parse_results

_PARTIAL = re.compile(
    r"^organic\[(\d+)\]\.(url|title|domain|snippet)(\(contains\)|\(ws-normalized\))?$"
)


def read_text(path: Path) -> str:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def norm(url: str) -> str:
    url = unquote(unquote(url)).strip()
    url = re.sub(r"^https?://(www\.)?", "", url, flags=re.I)
    return url.rstrip("/").lower()


def html_for(expected: Path) -> Path | None:
    stem = expected.name.split(".expected")[0]
    for suffix in (".html.gz", ".html"):
        candidate = expected.with_name(stem + suffix)
        if candidate.exists():
            return candidate
    return None


def compare_full(ours: list[str], truth_raw: list[str]) -> dict[str, Any]:
    truth = [clean_google_url(u) or u for u in truth_raw]
    truth_n = [norm(u) for u in truth]
    ours_n = [norm(u) for u in ours]
    hits = len(set(ours_n) & set(truth_n))
    return {
        "truth": len(truth_n),
        "ours": len(ours_n),
        "recall": hits / len(truth_n) if truth_n else (1.0 if not ours_n else 0.0),
        "precision": hits / len(ours_n) if ours_n else (1.0 if not truth_n else 0.0),
        "first_ok": (ours_n[:1] == truth_n[:1]),
    }


def _fact_ok(result: Any, field: str, mode: str | None, value: str) -> bool:
    if field == "domain":
        return bool(urlsplit(result.url).hostname == value)
    got = getattr(result, field)
    if field == "url":
        return norm(got) == norm(value)
    got, value = " ".join(got.split()), " ".join(value.split())
    return value in got if mode == "(contains)" else got == value


def compare_partial(page: Any, expected: dict[str, Any]) -> dict[str, Any]:
    checks = ok = 0
    failed: list[str] = []
    for key, value in expected.items():
        match = _PARTIAL.match(key)
        if key in ("organic_count", "organic_results_count"):
            good = len(page.results) == value
        elif match and value is not None:
            index, field, mode = int(match.group(1)), match.group(2), match.group(3)
            good = index < len(page.results) and _fact_ok(page.results[index], field, mode, value)
        else:
            continue
        checks += 1
        ok += good
        if not good:
            failed.append(key)
    return {"checks": checks, "ok": ok, "ours": len(page.results), "failed": failed}


def compare_fragment(page: Any, expected: dict[str, Any]) -> dict[str, Any]:
    """One result block cut from a page: its title, URL and description."""
    first = page.results[0] if page.results else None
    facts = {
        "title": first is not None and first.title == expected["title"],
        "url": first is not None and norm(first.url) == norm(expected["url"]),
        "snippet": first is not None
        and " ".join(expected["description"].split()) in " ".join(first.snippet.split()),
    }
    failed = [name for name, good in facts.items() if not good]
    return {
        "checks": len(facts),
        "ok": len(facts) - len(failed),
        "ours": len(page.results),
        "failed": failed,
    }


def expected_files(root: Path) -> list[Path]:
    fragments = [p for p in root.rglob("organic_result*/*.json")]
    return sorted([*root.rglob("*.expected*.json"), *fragments])


def evaluate(root: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for expected in expected_files(root):
        if expected.parent.name.startswith("organic_result"):
            page = parse_results(read_text(expected.with_suffix(".html")))
            row: dict[str, Any] = {
                "file": str(expected.relative_to(root)),
                "ms": 0.0,
                "family": expected.relative_to(root).parts[0],
            }
            row.update(compare_fragment(page, json.loads(expected.read_text())))
            rows.append(row)
            continue
        html_path = html_for(expected)
        if html_path is None:
            continue
        html = read_text(html_path)
        started = time.perf_counter()
        page = parse_results(html)
        ms = (time.perf_counter() - started) * 1000
        data = json.loads(expected.read_text())
        row = {
            "file": str(html_path.relative_to(root)),
            "ms": ms,
            "family": html_path.relative_to(root).parts[0],
        }
        if "partial" in expected.name:
            row.update(compare_partial(page, data["expected"]))
        else:
            truth = [r["url"] for r in (data.get("results") or [])]
            row.update(compare_full([r.url for r in page.results], truth))
        rows.append(row)
    return rows


def report(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        if "recall" in row:
            print(
                f"{row['file'][:78]:78} truth={row['truth']:3} ours={row['ours']:3} "
                f"R={row['recall']:.2f} P={row['precision']:.2f} "
                f"first={'ok' if row['first_ok'] else 'NO'} {row['ms']:.0f}ms"
            )
        else:
            print(
                f"{row['file'][:78]:78} partial {row['ok']}/{row['checks']} facts "
                f"(ours={row['ours']}) {row['ms']:.0f}ms {' '.join(row['failed'])}"
            )
    print()
    families = sorted({row["family"] for row in rows})
    for family in families:
        full = [r for r in rows if r["family"] == family and "recall" in r]
        part = [r for r in rows if r["family"] == family and "checks" in r]
        if full:
            recall = mean(r["recall"] for r in full)
            print(
                f"{family:28} {len(full):3} files  mean recall {recall:.3f}"
                f"  mean precision {mean(r['precision'] for r in full):.3f}"
                f"  first-url ok {sum(r['first_ok'] for r in full)}/{len(full)}"
            )
        if part:
            print(
                f"{family:28} {len(part):3} files  partial facts "
                f"{sum(r['ok'] for r in part)}/{sum(r['checks'] for r in part)}"
            )
    times = [r["ms"] for r in rows]
    print(f"parse time: median {median(times):.1f} ms, max {max(times):.1f} ms")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--rewrites"]:
        from .serp_rewrites import run

        return run(argv[1:])
    if len(argv) != 1:
        print(__doc__)
        return 2
    report(evaluate(Path(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
