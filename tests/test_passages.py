"""Query-focused reading (search/_passages.py): the passages that answer the question are what a
long page's read keeps, in page order with the gaps marked, within the budget; a read with no
question, and a text that fits, are the opening as before."""

from __future__ import annotations

import pytest

from search._passages import GAP, select, sentences, split_passages, tokens

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
    assert tokens("What is the Lighthouse") == ["lighthous"]  # its stem


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


# -- a voice's budget: sentences, highlights, confidence --------------------------------------

HARBOUR = [
    f"In year {1800 + i} the harbour of the old town counted {i} ships and {i + 3} cranes."
    for i in range(60)
]
KEEPER = "The keeper of the lighthouse on the north cape was Ada Lindqvist, an engineer."
BEFORE, AFTER = "Storms were frequent on that coast.", "She kept the lamp lit for forty years."


def voice_text() -> str:
    """Long paragraphs of sentences, the answer's sentence inside one between two others."""
    middle = " ".join([*HARBOUR[20:30], BEFORE, KEEPER, AFTER, *HARBOUR[30:40]])
    return "\n".join([" ".join(HARBOUR[:20]), middle, " ".join(HARBOUR[40:])])


def test_at_a_voice_budget_the_answer_sentence_comes_with_its_neighbours() -> None:
    text = voice_text()
    chosen = select(text, "Who was the keeper of the lighthouse on the north cape?", 600)
    assert chosen.focused and len(chosen.text) <= 600
    assert f"{BEFORE} {KEEPER} {AFTER}" in chosen.text  # as in the page, one space between
    assert chosen.best is not None and KEEPER in chosen.best.text(text)
    for piece in chosen.text.split(GAP):  # whole sentences only
        assert not piece.strip() or piece.strip().endswith(".")
        assert piece.strip() in text


def test_without_room_for_both_neighbours_the_sentence_after_comes_first() -> None:
    text = voice_text()
    budget = len(f"{GAP}\n{KEEPER} {AFTER}\n{GAP}") + 5  # not room for the one before too
    chosen = select(text, "Who was the keeper of the lighthouse on the north cape?", budget)
    assert f"{KEEPER} {AFTER}" in chosen.text and BEFORE not in chosen.text
    alone = select(text, "Who was the keeper of the lighthouse on the north cape?", 200)
    assert KEEPER in alone.text and len(alone.text) <= 200


def test_highlights_name_the_best_sentences_with_a_sentence_of_context() -> None:
    text = voice_text()
    chosen = select(text, "Who was the keeper of the lighthouse on the north cape?", 6000)
    # only sentences that share a term with the question, not their passage's others
    assert [h.text(text) for h in chosen.highlights] == [KEEPER]
    top = chosen.highlights[0]
    assert top.text(text) == KEEPER
    assert top.context(text) == f"{BEFORE} {KEEPER} {AFTER}"
    scores = [h.score for h in chosen.highlights]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0
    assert select(text, None, 600).highlights == ()


def test_a_page_that_fits_is_unchanged_but_still_names_its_highlights() -> None:
    text = "\n".join([BEFORE, KEEPER, AFTER])
    chosen = select(text, "Who was the keeper of the lighthouse?", 6000)
    assert chosen.text == text and not chosen.focused
    assert chosen.highlights[0].text(text) == KEEPER
    assert chosen.highlights[0].context(text) == KEEPER  # its paragraph holds it alone


def test_confidence_says_how_much_of_the_question_the_best_sentences_hold() -> None:
    text = voice_text()
    full = select(text, "keeper lighthouse north cape", 600)
    assert full.confidence == 1.0
    half = select(text, "keeper lighthouse zeppelin quasar", 600)
    assert 0.2 < half.confidence < 0.8
    assert select(text, "zeppelin quasar", 600).confidence == 0.0
    assert select(text, None, 600).confidence == 0.0
    # the snippet's terms help find the passage but do not count as the question's
    hinted = select(text, "zeppelin quasar", 600, hints=["keeper of the lighthouse"])
    assert hinted.confidence == 0.0 and KEEPER in hinted.text


def test_a_snippet_that_leads_elsewhere_does_not_move_the_confidence() -> None:
    """The confidence is the page's against the question alone: the same for a search's read
    (with its snippet) and the next result read unseen (without one), whatever the snippet."""
    answer = "The zeppelin hangar at the quasar field was built in 1911 by the navy."
    decoys = [f"The hangar bakery sold {w} to the keeper of the lighthouse." for w in "ABCD"]
    parts = [HARBOUR[n : n + 10] for n in range(0, 60, 10)]
    lines = [*parts[0], decoys[0], *parts[1], decoys[1], *parts[2], decoys[2], *parts[3]]
    text = "\n".join([*lines, answer, *parts[4], decoys[3], *parts[5], *HARBOUR[60:]])
    question = "Who built the zeppelin hangar?"
    plain = select(text, question, 600)
    hinted = select(text, question, 600, hints=["hangar bakery A B C D keeper lighthouse"])
    assert plain.highlights[0].text(text) == answer
    # the snippet's words chose three other sentences to show ...
    assert answer not in [h.text(text) for h in hinted.highlights]
    # ... and the confidence is still the answer's
    assert hinted.confidence == plain.confidence == 1.0


def test_a_sentence_in_a_passage_that_matches_more_wins_a_tie() -> None:
    weak = "A bakery sold bread. The keeper rang the bell."
    strong = "The keeper of the cape had a dog. The keeper rang the bell."
    text = "\n".join([*HARBOUR[:30], weak, *HARBOUR[30:40], strong, *HARBOUR[40:]])
    chosen = select(text, "Which keeper rang the bell?", 600)
    top = chosen.highlights[0]
    assert top.text(text) == "The keeper rang the bell."
    assert top.start > text.index(strong)  # the strong passage's, though the weak one's is first
    assert text[top.before : top.after] == strong


def test_english_words_meet_at_their_stem() -> None:
    assert tokens("captured capture") == tokens("capture captured") == ["captur", "captur"]
    assert tokens("fortresses") == tokens("fortress")


RIDGE = [
    "The northern ridge was covered in pine forest above the harbour.",
    "Shepherds walked their flocks along the northern ridge each spring.",
    "A chapel stood on the northern ridge until the great storm.",
    "From the northern ridge the whole bay could be seen on a clear day.",
]
TAKEN = (
    "Its capture in 1721 was the work of Ada Lindqvist, whose company held the fortresses "
    "for a decade."
)


def test_at_a_voice_budget_a_question_in_other_words_keeps_the_answer_sentence() -> None:
    # the answer's sentence shares no word with the question, only stems ("captured" and
    # "capture", "fortress" and "fortresses"); four sentences share two words with it
    text = "\n".join(
        [
            " ".join(HARBOUR[:20]),
            " ".join([*HARBOUR[20:25], RIDGE[0], RIDGE[1], *HARBOUR[25:30]]),
            " ".join([*HARBOUR[30:35], RIDGE[2], *HARBOUR[35:38]]),
            " ".join([*HARBOUR[38:42], TAKEN, *HARBOUR[42:45]]),
            " ".join([*HARBOUR[45:50], RIDGE[3], *HARBOUR[50:]]),
        ]
    )
    chosen = select(text, "Who captured the fortress on the northern ridge?", 600)
    assert chosen.focused and len(chosen.text) <= 600
    assert TAKEN in chosen.text
    for piece in chosen.text.split(GAP):  # whole sentences only
        assert not piece.strip() or piece.strip() in text


def test_a_question_asking_when_prefers_the_sentence_with_a_date() -> None:
    dated = (
        "After many storms and a long illness the keeper finally left the lighthouse in 1904, "
        "aged seventy."
    )
    undated = "The keeper left the lighthouse often to fish."
    text = "\n".join(
        [
            " ".join(HARBOUR[:20]),
            " ".join([*HARBOUR[20:25], undated, *HARBOUR[25:30]]),
            " ".join([*HARBOUR[30:35], dated, *HARBOUR[35:40]]),
            " ".join(HARBOUR[40:]),
        ]
    )
    chosen = select(text, "When did the keeper leave the lighthouse?", 600)
    assert chosen.highlights[0].text(text) == dated and dated in chosen.text
    # the same question without asking for a date: the shorter sentence matches better
    plain = select(text, "Did the keeper leave the lighthouse?", 600)
    assert plain.highlights[0].text(text) == undated


@pytest.mark.parametrize(
    ("sentences_", "question", "answer"),
    [
        (
            [
                "町の市場は毎週開かれた。",
                "北岬の灯台守はリンドクヴィストであった。",
                "灯台は白い。",
            ],
            "北岬の灯台守は誰か。",
            "北岬の灯台守はリンドクヴィストであった。",
        ),
        (
            ["城镇市场每周开放。", "北岬灯塔的看守人是林德奎斯特。", "灯塔是白色的。"],
            "北岬灯塔的看守人是谁？",
            "北岬灯塔的看守人是林德奎斯特。",
        ),
    ],
    ids=["ja", "zh"],
)
def test_unspaced_sentences_are_kept_as_in_the_page(
    sentences_: list[str], question: str, answer: str
) -> None:
    filler = "".join(f"町の歴史の段落{i}である。" for i in range(40))
    text = "\n".join([filler, filler + "".join(sentences_) + filler, filler])
    chosen = select(text, question, 600)
    assert chosen.focused and answer in chosen.text and len(chosen.text) <= 600
    assert "".join(sentences_) in chosen.text  # neighbours joined with nothing between
    assert chosen.highlights[0].text(text) == answer


def test_thai_is_scored_on_bigrams_and_other_scripts_end_sentences_with_their_marks() -> None:
    assert tokens("ประภาคาร") == ["ปร", "ระ", "ะภ", "ภา", "าค", "คา", "าร"]
    text = "سؤال أول؟ جملة ثانية. वाक्य एक। वाक्य दो।"
    assert [text[a:b] for a, b in sentences(text, 0, len(text))] == [
        "سؤال أول؟",
        "جملة ثانية.",
        "वाक्य एक।",
        "वाक्य दो।",
    ]
