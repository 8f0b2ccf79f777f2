"""`make bench-answers` in miniature, on the committed subsets (tests/fixtures/answers): the
pages keep every answer through extraction, the bench prints every reader for every
language and budget, the new read keeps at least as many answers as the opening, the folds
mode chooses on the other folds, and the service path reads through `serve`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from bench.answers._data import load_sets
from bench.answers._eval import normalise, prepare

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "answers"


def run_bench(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench.answers", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        check=False,
    )


def test_built_pages_look_like_articles_and_extraction_keeps_every_answer() -> None:
    sets = load_sets([FIXTURES])
    assert sorted(s.language for s in sets) == ["en", "ja", "zh"]
    pages, items = prepare(sets)
    assert len(items) > 300
    assert all(item.survived for item in items), [i.answer for i in items if not i.survived]
    for page in pages:
        assert f'<html lang="{page.language}">' in page.html
        for part in (
            'class="site-header"',
            'class="sidebar"',
            "<h1",
            "<h2",
            'class="infobox"',
            'class="references"',
            'class="site-footer"',
        ):
            assert part in page.html, (page.article.title, part)
        # the navigation and the references stay out of the text a read extracts
        assert "Privacy" not in page.text and "Retrieved" not in page.text
        for paragraph in page.article.paragraphs:
            assert normalise(paragraph.text) in normalise(page.text)


def test_the_new_read_keeps_at_least_the_openings_answers(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    proc = run_bench(str(FIXTURES), "--per-page", "25", "--json", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    for lang in ("en", "ja", "zh"):
        assert re.search(rf"^  {lang}: \d+/\d+ \(100\.00%\)", proc.stdout, re.M), proc.stdout
        for budget in (6000, 1500, 600):
            assert re.search(
                rf"^{lang}\s+{budget} \|\s+\d+(\s+[\d.]+%){{3}} \|\s+\d+(\s+[\d.]+%){{3}}$",
                proc.stdout,
                re.M,
            ), proc.stdout
    figures = json.loads(out.read_text())["in_process"]
    budgets = (6000, 1500, 600)
    assert set(figures) == {f"{lang}/{b}" for lang in ("en", "ja", "zh") for b in budgets}
    for group, row in figures.items():
        assert row["new"] >= row["opening"], (group, row)
        assert row["longer_new"] >= row["longer_opening"], (group, row)
    # a compact budget is where the opening loses most of the answers
    assert figures["ja/1500"]["new"] > figures["ja/1500"]["opening"] + 20
    assert "select() per read, ms (measured on a busy machine" in proc.stdout


def test_the_folds_mode_reports_a_choice_per_held_out_fold(tmp_path: Path) -> None:
    proc = run_bench(
        str(FIXTURES),
        "--per-page",
        "10",
        "--folds",
        "2",
        "--grid",
        "K1=0.9,1.2",
        "--cv-per-page",
        "4",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    folds = re.findall(r"^  fold (\d): chosen K1=([\d.]+): ", proc.stdout, re.M)
    assert [f for f, _ in folds] == ["0", "1"], proc.stdout
    assert re.search(
        r"^  ja 1500: held-out mean [\d.]+ \(module's setting [\d.]+\)$", proc.stdout, re.M
    )


@pytest.mark.slow
def test_the_service_path_reads_through_serve_with_the_stdlib_client(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    proc = run_bench(
        str(FIXTURES),
        "--per-page",
        "5",
        "--service",
        "--sample",
        "2",
        "--budgets",
        "1500",
        "--json",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    service = json.loads(out.read_text())["service"]
    assert set(service) == {"en/1500", "ja/1500", "zh/1500"}
    for group, row in service.items():
        assert row["questions"] == 2 and row["failed"] == 0, (group, row)
        # the envelope carries at least what today's read carries on the same questions
        assert row["service"] >= row["in_process_opening"], (group, row)


def test_a_missing_question_set_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_bench(str(tmp_path / "nowhere"))
    assert proc.returncode == 2
    assert "no such file or folder" in proc.stderr and "Traceback" not in proc.stderr


def test_the_next_result_mode_reports_each_threshold_and_no_trade_at_the_chosen_one(
    tmp_path: Path,
) -> None:
    out = tmp_path / "figures.json"
    proc = run_bench(
        str(FIXTURES),
        "--per-page",
        "5",
        "--folds",
        "1",
        "--folds-only",
        "--grid",
        "K1=1.2",
        "--next",
        "--budgets",
        "6000",
        "--json",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert re.search(r"^  ja 6000: \d+ questions; confidence p10 p25 p50 p75", proc.stdout, re.M)
    figures = json.loads(out.read_text())["next_result"]
    for group, row in figures.items():
        chosen = row["thresholds"]["0.5/0.1"]  # the tool's setting and margin
        alone = row["thresholds"]["0/0"]  # the top result alone
        assert chosen["traded"] == 0, (group, chosen)
        assert chosen["second"] > alone["second"], (group, chosen, alone)
        assert row["confidence_with_answer"] > row["confidence_without"], group


@pytest.mark.slow
def test_the_next_result_through_serve_opens_the_page_that_answers(tmp_path: Path) -> None:
    """The held-out check's shape in miniature: a results page whose top two results are the
    question's page and the page sharing most of its words, in either order, searched
    through `serve` with the standard-library client."""
    out = tmp_path / "figures.json"
    proc = run_bench(str(FIXTURES), "--per-page", "5", "--next-service", "2", "--json", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(out.read_text())["next_service"]
    assert {g.split("/")[0] for g in figures} == {"en", "ja", "zh"}
    for group, row in figures.items():
        assert row["questions"] == 2 and row["failed"] == 0 and row["skipped"] == 0, (group, row)
        if group.endswith("answer only in result 2"):
            # read unseen, then opened (unless the top page holds it too): the brain gets it
            assert row["answered"] == 1.0, (group, row)
    peeks = Counter(k for row in figures.values() for k, n in row["peek"].items() for _ in range(n))
    assert peeks["ok"] > 0, peeks  # the peek went through the egress guard and was judged
    opened = [row["opened"] for g, row in figures.items() if g.endswith("only in result 2")]
    assert sum(opened) >= 2, figures  # the answer's page opened in result 2 more often than not
