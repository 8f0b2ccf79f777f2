"""Query-focused reading (search/_passages.py): the passages that answer the question are what a
long page's read keeps, in page order with the gaps marked, within the budget; a read with no
question, and a text that fits, are the opening as before."""

from __future__ import annotations

import pytest

from search._passages import GAP, select, split_passages, tokens

FILLER = [
    f"Paragraph {i} of the history describes the town's market, its bridges and the river "
    f"trade of the {i}th century in some detail, with names of merchants and guilds."
    for i in range(1, 60)
]
ANSWER = "The lighthouse on the north cape was built in 1873 by the engineer Ada Lindqvist."
TEXT = "\n".join([*FILLER[:40], ANSWER, *FILLER[40:]])


def test_a_long_page_keeps_the_passage_that_answers_far_past_the_opening() -> None:
    assert TEXT.index(ANSWER) > 6000
    chosen = select(TEXT, "When was the lighthouse on the north cape built?", 1500)
    assert chosen.focused and ANSWER in chosen.text
    assert len(chosen.text) <= 1500
    assert chosen.best is not None and chosen.best.text(TEXT) == ANSWER
    assert GAP in chosen.text  # the model knows it reads excerpts
    roomy = select(TEXT, "When was the lighthouse on the north cape built?", 4000)
    opening = TEXT[: TEXT.index(".") + 1]
    assert roomy.text.startswith(opening) and ANSWER in roomy.text  # the lead, then the answer


def test_kept_passages_are_in_page_order_with_each_gap_marked() -> None:
    chosen = select(TEXT, "lighthouse north cape engineer, and the 55th century guilds", 3000)
    starts = [p.start for p in chosen.passages]
    assert starts == sorted(starts)
    pieces = [p for p in chosen.text.split(f"\n{GAP}\n")]
    for piece in pieces:  # every piece is text of the page, whole
        assert piece.strip(f"\n{GAP}") in TEXT


def test_a_read_without_a_question_or_a_text_that_fits_is_the_opening() -> None:
    assert select(TEXT, None, 6000).text == TEXT[:6000]
    assert select(TEXT, "   ", 6000).text == TEXT[:6000]
    short = "\n".join(FILLER[:3])
    whole = select(short, "lighthouse", 6000)
    assert whole.text == short and not whole.focused


def test_a_question_nothing_in_the_page_matches_keeps_the_opening() -> None:
    chosen = select(TEXT, "zeppelin quasar", 2000)
    assert not chosen.focused and chosen.text == TEXT[:2000]


@pytest.mark.parametrize(
    ("question", "answer", "filler"),
    [
        (
            "北岬の灯台は何年に建てられたか。",
            "北岬の灯台は1873年に技師リンドクヴィストによって建てられた。",
            "町の市場と橋の歴史について述べる段落である。川の交易が盛んであった。",
        ),
        (
            "北岬灯塔是哪一年建成的？",
            "北岬灯塔于1873年由工程师林德奎斯特建成。",
            "本段介绍了城镇市场和桥梁的历史，河流贸易十分繁荣。",
        ),
        (
            "북곶 등대는 언제 지어졌나?",
            "북곶 등대는 1873년에 기술자 린드크비스트가 지었다.",
            "이 문단은 마을 시장과 다리의 역사를 설명한다. 강의 무역이 활발했다.",
        ),
    ],
    ids=["ja", "zh", "ko"],
)
def test_unspaced_scripts_find_their_answer(question: str, answer: str, filler: str) -> None:
    text = "\n".join([*[f"{filler}{i}" for i in range(200)], answer, filler])
    chosen = select(text, question, 1500)
    assert chosen.focused and answer in chosen.text
    assert chosen.best is not None and chosen.best.text(text) == answer


def test_unspaced_runs_are_bigrams_and_question_words_are_dropped() -> None:
    assert tokens("東京都") == ["東京", "京都"]
    assert tokens("등대는") == ["등대", "대는"]
    assert tokens("What is the Lighthouse") == ["lighthouse"]


def test_a_long_paragraph_is_cut_into_windows_of_whole_sentences() -> None:
    sentences = [f"Sentence number {i} tells one small fact about the harbour." for i in range(30)]
    text = " ".join(sentences)
    windows = split_passages(text, 300)
    assert len(windows) > 3
    assert all(w.end - w.start <= 300 for w in windows)
    for window in windows:
        piece = window.text(text)
        assert piece.startswith("Sentence number") and piece.endswith("harbour.")


def test_the_search_snippet_helps_find_the_passage() -> None:
    chosen = select(
        TEXT, "who made it", 1200, hints=["built in 1873 by the engineer Ada Lindqvist"]
    )
    assert ANSWER in chosen.text


def test_a_window_cut_inside_a_paragraph_keeps_the_sentences_around_its_cuts() -> None:
    sentences = [f"Sentence {i} says the harbour had {i} cranes that year." for i in range(40)]
    plain = " ".join(sentences)
    cut = split_passages(plain, 750)[1]  # a window that ends inside the paragraph
    last = plain[cut.start : cut.end].rsplit("Sentence ", 1)[1].split(" ", 1)[0]
    answer = f"Sentence {last} says the harbour had {last} cranes that year."
    text = plain.replace(answer, f"Sentence {last} says the lighthouse keeper counted gulls.")
    after = text[text.index("lighthouse") :].split(". ", 1)[1][:12]  # the next sentence
    chosen = select(text + "\nA closing paragraph.", "What did the lighthouse keeper count?", 1500)
    assert chosen.focused and "lighthouse keeper counted gulls. " + after in chosen.text
