"""`make bench-extract` in miniature, on the committed subset (tests/fixtures/articles), so the
benchmark cannot rot: it must print both rows, the cross-validated F1 and the timing."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rouge_score import rouge_scorer

from bench.extract.articles import (
    RougeTokenizer,
    bootstrap,
    load_aeb,
    load_readability,
    plain,
    pooled,
    rouge_lsum,
)

ROOT = Path(__file__).resolve().parents[1]


def run_bench(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m bench.extract` with these arguments, as `make bench-extract` runs it."""
    return subprocess.run(
        [sys.executable, "-m", "bench.extract", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
def test_the_extraction_bench_prints_scores_cross_validation_and_timing() -> None:
    proc = run_bench(str(ROOT / "tests" / "fixtures"))
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "scrapinghub-aeb: 8 development pages" in out
    assert "readability test pages: 4 development pages" in out
    assert "cross-validation over all 12 development pages" in out
    scrapinghub = out[: out.index("readability test pages:")]
    rows = dict(
        re.findall(
            r"^(trafilatura\.extract \(plain\)|ours \(extract_article\))"
            r"\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+[\d.]+$",
            scrapinghub,
            re.M,
        )
    )
    assert float(rows["ours (extract_article)"]) >= float(rows["trafilatura.extract (plain)"])
    folds = re.findall(
        r"^  fold \d: chosen on the other folds: .+ F1 ([\d.]+) ROUGE-LSum [\d.]+$", out, re.M
    )
    assert len(folds) == 3
    match = re.search(r"^cross-validated F1 \(3-fold, .*\): ([\d.]+) ± ([\d.]+)$", out, re.M)
    assert match and 0.9 <= float(match.group(1)) <= 1.0
    rouge = re.search(r"^cross-validated ROUGE-LSum F1 \(the same folds\): ([\d.]+) ± ", out, re.M)
    assert rouge and 0.9 <= float(rouge.group(1)) <= 1.0
    languages = out[out.index("ROUGE-LSum F1 by the page's declared language") :]
    assert re.search(r"^en\s+\d+\s+[\d.]+\s+[\d.]+\s+[+-][\d.]+$", languages, re.M)
    assert re.search(r"^extraction time per page, 14 pages \(interleaved", out, re.M)
    for row in ("trafilatura.extract \\(plain\\)", "ours \\(extract_article\\)"):
        assert re.search(rf"^{row}\s+[\d.]+ms\s+[\d.]+ms\s+\d+ms$", out, re.M)
    ratios = re.search(
        r"^ours / plain: median ([\d.]+)x, p90 ([\d.]+)x .* 2x plain \+ 50 ms: (\d+)$", out, re.M
    )
    assert ratios and float(ratios.group(1)) > 0
    slowest = out[out.index("slowest against that limit") :].splitlines()[1:]
    assert len(slowest) == 8 and all(re.search(r"\d+ms\s+\d+ms$", line) for line in slowest)


def test_a_missing_benchmark_folder_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_bench(str(tmp_path))
    assert proc.returncode == 2
    assert "no scrapinghub-aeb/ground-truth.json" in proc.stderr


@pytest.mark.slow
def test_held_out_pages_are_scored_without_the_development_pages(tmp_path: Path) -> None:
    """`--held-out` scores only pages the settings never saw: given the whole benchmark
    folder, the development pages in it are skipped, not scored twice."""
    subset = ROOT / "tests" / "fixtures" / "articles" / "scrapinghub-aeb"
    truth = json.loads((subset / "ground-truth.json").read_text(encoding="utf-8"))
    dev = tmp_path / "articles" / "scrapinghub-aeb"
    (dev / "html").mkdir(parents=True)
    pages = sorted((subset / "html").iterdir())[:5]
    for page in pages:
        shutil.copy(page, dev / "html" / page.name)
    keys = {page.name.split(".")[0] for page in pages}
    kept = {key: value for key, value in truth.items() if key in keys}
    (dev / "ground-truth.json").write_text(json.dumps(kept), encoding="utf-8")
    proc = run_bench(str(tmp_path), "--held-out", str(subset))
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "scrapinghub-aeb: 5 development pages" in out
    assert "held out: 3 pages never tuned on" in out
    held = out[out.index("held out:") :]
    score = re.search(r"^ours \(extract_article\)\s+[\d.]+\s+[\d.]+\s+(0\.\d{3})$", held, re.M)
    assert score
    interval = re.search(r"95% interval over these pages .*: ours ([\d.]+)-([\d.]+);", held)
    assert interval
    assert float(interval.group(1)) <= float(score.group(1)) <= float(interval.group(2))


def test_the_bootstrap_interval_brackets_the_score_and_a_lead_only_where_there_is_one() -> None:
    pages = [(0.9, 0.05, 0.05), (0.5, 0.3, 0.2), (0.8, 0.1, 0.1), (0.95, 0.0, 0.05)] * 5
    score = pooled(pages)[2]
    (low, high), (lead_low, lead_high) = bootstrap(pages, pages)
    assert low < score < high
    assert lead_low == lead_high == 0.0  # the same extractor has no lead on any resample
    worse = [(tp - 0.1, fp + 0.1, fn) for tp, fp, fn in pages]
    assert bootstrap(pages, worse)[1][0] > 0  # better on every page: better on every resample


def test_a_readability_folder_without_pages_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_bench(str(ROOT / "tests" / "fixtures"), "--readability", str(tmp_path))
    assert proc.returncode == 2
    assert f"no <page>/expected.html under {tmp_path}" in proc.stderr


@pytest.mark.slow
def test_wcxb_articles_develop_and_its_test_split_is_held_out(tmp_path: Path) -> None:
    """`--wcxb DIR`: the dev split's articles join the development pages, the test split's
    articles are scored as held out, and other page types are left out (built here in
    WCXB's layout from the committed scrapinghub pages)."""
    subset = ROOT / "tests" / "fixtures" / "articles" / "scrapinghub-aeb"
    truth = json.loads((subset / "ground-truth.json").read_text(encoding="utf-8"))
    for i, page in enumerate(sorted((subset / "html").iterdir())[:6]):
        key, split = f"{i:04d}", "dev" if i < 3 else "test"
        kind = {"primary": "forum" if i == 5 else "article"}
        (tmp_path / split / "html").mkdir(parents=True, exist_ok=True)
        (tmp_path / split / "ground-truth").mkdir(parents=True, exist_ok=True)
        shutil.copy(page, tmp_path / split / "html" / f"{key}.html.gz")
        body = truth[page.name.split(".")[0]]["articleBody"]
        record = {"_internal": {"page_type": kind}, "ground_truth": {"main_content": body}}
        (tmp_path / split / "ground-truth" / f"{key}.json").write_text(json.dumps(record))
    proc = run_bench(str(ROOT / "tests" / "fixtures"), "--wcxb", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "wcxb articles: 3 development pages" in proc.stdout
    assert "cross-validation over all 15 development pages" in proc.stdout
    held = proc.stdout[proc.stdout.index("wcxb held out: 2 test-split articles") :]
    assert re.search(r"^ours \(extract_article\)\s+[\d.]+\s+[\d.]+\s+0\.\d{3}$", held, re.M)


def test_rouge_lsum_is_rouge_scores_own_on_real_pages() -> None:
    """The bench's ROUGE-LSum (numpy tables) gives rouge-score's numbers exactly, on the
    committed pages against plain trafilatura's text and on cut and reordered texts."""
    scorer = rouge_scorer.RougeScorer(["rougeLsum"], tokenizer=RougeTokenizer())
    articles = ROOT / "tests" / "fixtures" / "articles"
    pages = load_aeb(articles / "scrapinghub-aeb")[:3] + load_readability(articles / "readability")
    pages = [page for page in pages if page.key != "engadget"]  # seconds in rouge-score alone
    for page in pages:
        lines = plain(page).splitlines()
        for text in ("\n".join(lines), "\n".join(lines[::-1][:10]), "\n".join(lines[3:])):
            want = scorer.score(page.truth, text)["rougeLsum"]
            assert rouge_lsum(page.truth, text) == (want.precision, want.recall, want.fmeasure)
    assert rouge_lsum("a b c", "") == (0.0, 0.0, 0.0)
    assert rouge_lsum("東京 で 会議", "東京で会議")[2] == 1.0  # characters are tokens
