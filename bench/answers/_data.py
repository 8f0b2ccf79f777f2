"""Question sets for `make bench-answers`: SQuAD-format files read into articles (title,
paragraphs in order, each question with its answer's offset), and the converter that
turned SQuAD v1.1's train articles, published only as explorer pages, back into that form.

SQuAD-format quirks handled here: JSQuAD writes `TITLE [SEP] ` before every context (its
`answer_start` counts it); SQuAD 2.0 and KorQuAD 2 carry unanswerable questions (skipped);
an answer whose offset does not point at its text is looked up in its paragraph, and the
question is dropped (and counted) when the text is not there at all.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "Article",
    "Paragraph",
    "Question",
    "QuestionSet",
    "explorer_squad",
    "guess_language",
    "load_set",
    "load_sets",
    "subset",
]

_SEP = " [SEP] "
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u4e00-\u9fff]")
# Articles of one short paragraph each (CMRC 2018) are put together this many to a page,
# in file order: a digest, or a long page of several stories.
DIGEST_GROUP = 12


@dataclass(frozen=True)
class Question:
    """A question and its answer: `start` is the answer's offset in its paragraph."""

    qid: str
    text: str
    answer: str
    start: int


@dataclass(frozen=True)
class Paragraph:
    text: str
    questions: tuple[Question, ...] = ()


@dataclass(frozen=True)
class Article:
    """One page's worth of text: a title and its paragraphs in order."""

    title: str
    paragraphs: tuple[Paragraph, ...]
    language: str
    source: str = ""

    @property
    def chars(self) -> int:
        return sum(len(p.text) for p in self.paragraphs) + max(len(self.paragraphs) - 1, 0)

    def questions(self) -> Iterator[tuple[int, Question]]:
        for index, paragraph in enumerate(self.paragraphs):
            for question in paragraph.questions:
                yield index, question


@dataclass
class QuestionSet:
    """The articles of one file, its language and what was dropped while reading it."""

    name: str
    language: str
    articles: list[Article]
    dropped: dict[str, int] = field(default_factory=dict)

    @property
    def questions(self) -> int:
        return sum(sum(1 for _ in a.questions()) for a in self.articles)


def guess_language(text: str) -> str:
    """ko for Hangul, ja for kana, zh for Han without kana, else en."""
    sample = text[:20000]
    if len(_HANGUL.findall(sample)) > 20:
        return "ko"
    if len(_KANA.findall(sample)) > 20:
        return "ja"
    if len(_HAN.findall(sample)) > 20:
        return "zh"
    return "en"


def _count(dropped: dict[str, int], why: str) -> None:
    dropped[why] = dropped.get(why, 0) + 1


def _answer(
    qa: dict[str, Any], context: str, shift: int, dropped: dict[str, int]
) -> Question | None:
    """The first answer whose offset points at its text in the paragraph (JSQuAD's may point
    into the `TITLE [SEP] ` prefix: the title is the answer); else the first answer's text
    found in the paragraph; else none."""
    answers = [a for a in qa.get("answers") or () if a.get("text")]
    if qa.get("is_impossible") or not answers:
        _count(dropped, "unanswerable")
        return None
    qid, question = str(qa.get("id", "")), qa["question"].strip()
    for answer in answers:
        text, start = answer["text"], int(answer.get("answer_start", -1)) - shift
        if start >= 0 and context[start : start + len(text)] == text:
            return Question(qid, question, text, start)
    text = answers[0]["text"]
    start = context.find(text)
    if start < 0:
        _count(dropped, "answer only outside its paragraph (title prefix)")
        return None
    _count(dropped, "offset repaired (first occurrence)")
    return Question(qid, question, text, start)


def _paragraph(raw: dict[str, Any], dropped: dict[str, int]) -> Paragraph:
    context = raw["context"]
    shift = 0
    if _SEP in context[:200]:  # JSQuAD: "TITLE [SEP] " before the text
        shift = context.index(_SEP) + len(_SEP)
        context = context[shift:]
    # A paragraph is one line of the page: a newline inside a context is a space here.
    flat = context.replace("\r", " ").replace("\n", " ")
    questions = [_answer(qa, flat, shift, dropped) for qa in raw.get("qas") or ()]
    return Paragraph(flat, tuple(q for q in questions if q is not None))


def _group(articles: list[Article]) -> list[Article]:
    if not articles or any(len(a.paragraphs) > 1 for a in articles):
        return articles
    pages = []
    for i in range(0, len(articles), DIGEST_GROUP):
        chunk = articles[i : i + DIGEST_GROUP]
        paragraphs = tuple(p for a in chunk for p in a.paragraphs)
        pages.append(Article(chunk[0].title, paragraphs, chunk[0].language, chunk[0].source))
    return pages


def load_set(path: Path, language: str | None = None) -> QuestionSet:
    """A SQuAD-format file as articles; single-paragraph articles become digest pages."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable SQuAD-format JSON file ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ValueError(f"{path}: no `data` list: not a SQuAD-format file")
    dropped: dict[str, int] = {}
    raw_articles = data["data"]
    sample = " ".join(
        p.get("context", "") for a in raw_articles[:5] for p in a.get("paragraphs", [])[:3]
    )
    lang = language or data.get("language") or guess_language(sample)
    articles = []
    for raw in raw_articles:
        paragraphs = tuple(_paragraph(p, dropped) for p in raw.get("paragraphs") or ())
        paragraphs = tuple(p for p in paragraphs if p.text.strip())
        if paragraphs:
            title = str(raw.get("title") or "").replace("_", " ").strip()
            articles.append(Article(title or path.stem, paragraphs, lang, path.name))
    return QuestionSet(path.name, lang, _group(articles), dropped)


def load_sets(paths: Iterable[Path]) -> list[QuestionSet]:
    """Every `*.json` file under the given files and folders, in a stable order."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*.json") if p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            raise ValueError(f"{path}: no such file or folder")
    if not files:
        raise ValueError("no SQuAD-format .json files in " + ", ".join(map(str, paths)))
    return [load_set(f) for f in files]


# -- SQuAD v1.1 train from the explorer pages -----------------------------------------------------

_PRE = re.compile(r"<pre>(.*?)</pre>(.*?)(?=<pre>|$)", re.S)
_QUESTION = re.compile(
    r'<strong class="question">(.*?)</strong>.*?<span class="answer">(.*?)</span>', re.S
)
_TITLE = re.compile(r'<h1 id="title">(.*?)</h1>', re.S)


def explorer_article(page: str, name: str) -> dict[str, Any]:
    """One explorer page as a SQuAD article. The pages show each answer's text but not its
    offset: `answer_start` is the answer's first occurrence in its paragraph."""
    title_match = _TITLE.search(page)
    title = html.unescape(title_match.group(1)) if title_match else name
    paragraphs = []
    for p_index, match in enumerate(_PRE.finditer(page)):
        context = html.unescape(match.group(1))
        qas = []
        for q_index, (question, answer) in enumerate(_QUESTION.findall(match.group(2))):
            text = html.unescape(answer)
            start = context.find(text)
            if start < 0:
                continue
            qas.append(
                {
                    "id": f"{name}-{p_index}-{q_index}",
                    "question": html.unescape(question).strip(),
                    "answers": [{"text": text, "answer_start": start}],
                }
            )
        paragraphs.append({"context": context, "qas": qas})
    return {"title": title.replace(" ", "_"), "paragraphs": paragraphs}


def explorer_squad(git_dir: Path, commit: str, folder: str = "explore/1.1/train") -> dict[str, Any]:
    """Every article page under `folder` at `commit` of a SQuAD-explorer clone (git only:
    `git show`), as one SQuAD-format document."""
    listing = (
        subprocess.run(  # -z: names as they are (Beyoncé.html is not quoted)
            ["git", "-C", str(git_dir), "ls-tree", "-z", "--name-only", commit, folder + "/"],
            capture_output=True,
            check=True,
        )
        .stdout.decode("utf-8")
        .split("\0")
    )
    data = []
    for path in sorted(listing):
        name = path.rsplit("/", 1)[-1].removesuffix(".html")
        if not path.endswith(".html") or name == "index":
            continue
        page = subprocess.run(
            ["git", "-C", str(git_dir), "show", f"{commit}:{path}"],
            capture_output=True,
            check=True,
        ).stdout.decode("utf-8")
        data.append(explorer_article(page, name))
    return {"version": "1.1", "language": "en", "data": data}


def subset(path: Path, titles: list[str]) -> dict[str, Any]:
    """The named articles of a SQuAD-format file, byte-for-byte as they are there (their
    order kept), with the file's other top-level fields."""
    data = json.loads(path.read_text(encoding="utf-8"))
    wanted = set(titles)
    kept = [a for a in data["data"] if a.get("title") in wanted]
    missing = wanted - {a.get("title") for a in kept}
    if missing:
        raise ValueError(f"{path}: no article titled " + ", ".join(sorted(missing)))
    return {**{k: v for k, v in data.items() if k != "data"}, "data": kept}
