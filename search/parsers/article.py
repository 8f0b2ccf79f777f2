"""Page HTML in, main text and metadata out (`Article`), with trafilatura and a plain fallback.

Settings were chosen on three development sets (the scrapinghub article-extraction benchmark's
development pages, mozilla/readability's test pages and WCXB's dev articles; see
bench/extract/articles.py): precision favoured, tables kept, comments dropped. Empty elements are
removed first with their trailing text kept, because precision mode deletes that text with
them. When favouring precision cut the article down to a sliver of what trafilatura's balanced
mode finds (`THIN_SHARE`), or found nothing at all, the balanced text is read instead. Two
general clean-ups follow: the headline (already the article's `title`) is not repeated as the
first line, and whole lines that are page furniture (share bars, comment counters, newsletter
and cookie prompts, "Related:" links), in English and the European languages an audience here
reads, are dropped. When trafilatura finds nothing (a tiny or unusual page) the visible body
text is returned instead (all of the body's text when even that is empty), so a read never
comes back empty because of the extractor.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import justext
import justext.core
import lxml.etree
import lxml.html
import structlog
import trafilatura
import trafilatura.external
import trafilatura.metadata as tm
from htmldate import find_date
from lxml.etree import ParserError

from search._language import count_words

from ._models import Article

__all__ = [
    "EXTRACT_OPTIONS",
    "MAX_HTML_CHARS",
    "MAX_JSON_CHARS",
    "OPENING_MIN_WORDS",
    "RECALL_OPTIONS",
    "RESCUE_OPTIONS",
    "THIN_SHARE",
    "body_words",
    "clean_text",
    "combine",
    "drop_code",
    "drop_empty",
    "dropped_prose",
    "extract_article",
    "extraction_pass",
    "extraction_passes",
    "keep_opening",
    "page_metadata",
    "page_titles",
    "page_words",
    "visible_text",
]

log = structlog.get_logger(__name__)

EXTRACT_OPTIONS: dict[str, Any] = {
    "include_comments": False,
    "include_tables": True,
    "include_links": False,
    "include_images": False,
    "favor_precision": True,
    "favor_recall": False,
    "deduplicate": False,
}
# The recall pass (trafilatura's balanced mode) replaces the precision pass when the precision
# pass kept fewer than this share of its words: precision mode then cut the article itself
# (a page whose paragraphs sit in blocks it judged to be furniture), not the furniture around
# it. Chosen by 3-fold cross-validation over the development sets (bench/extract/articles.py).
RECALL_OPTIONS: dict[str, Any] = {**EXTRACT_OPTIONS, "favor_precision": False}
THIN_SHARE = 0.2
# The recall pass where the precision pass found nothing: without trafilatura's comparison
# with readability and jusText (`fast`), which the precision pass has just run on the page
# to no avail. On the 11 such development and evaluation pages (an unclosed `<header>` or
# `<nav>` holding the body on most), the same text on 9, more of the article on one (WCXB
# 4267: ROUGE-LSum 0.30 -> 0.67), and 10-90% less time.
RESCUE_OPTIONS: dict[str, Any] = {**RECALL_OPTIONS, "fast": True}
# `keep_opening`: lines of at least this many words (`count_words`) that precision mode dropped
# and the balanced pass kept are read back when they read as article text; 0: never. Chosen by
# cross-validation over the development sets (bench/extract/articles.py): never. Every minimum tried
# (6-30 words; the opening alone, the runs inside alone, both) lost precision on every set for
# almost no recall (readability's pages: token F1 0.940 -> 0.936-0.938, ROUGE-LSum 0.9372 ->
# 0.9328): what precision mode drops there and the balanced pass keeps is mostly teasers,
# captions and pull quotes that read like sentences.
OPENING_MIN_WORDS = 0
PROSE_MIN_WORDS = 12  # `dropped_prose`: a paragraph this long that reads as prose
_INVISIBLE = (
    "script",
    "style",
    "noscript",
    "nav",
    "header",
    "footer",
    "template",
    "svg",
    "iframe",
    "form",
    "aside",
)
_BLANK_LINES = re.compile(r"\n\s*\n+")
# `<title[^>]*>(.*?)</title\s*>` in three steps: that one pattern restarted its scan to the
# window's end at every `<title`, so a page of `<title>` repeated took minutes, holding the GIL.
_TITLE_OPEN = re.compile(r"<title", re.IGNORECASE)
_TITLE_CLOSE = re.compile(r"</title\s*>", re.IGNORECASE)
_TITLE_WITHIN = 300_000  # characters of markup searched for <title> (it is in the head)
# Characters of markup extracted from: an article sits well inside the first 4 MB of any page,
# and trafilatura's date search grows faster than the page (10 MB took 41 s, holding the GIL
# for seconds at a time, so no deadline could fire on time).
MAX_HTML_CHARS = 4_000_000
# trafilatura's CUT_EMPTY_ELEMS (settings.py, 2.3.1): what its clean-up deletes when empty.
_CUT_WHEN_EMPTY = (
    *("article", "b", "blockquote", "dd", "div", "dt", "em", "h1", "h2", "h3", "h4", "h5"),
    *("h6", "i", "li", "main", "p", "pre", "q", "section", "span", "strong"),
)
# Embedded JSON longer than this is not parsed for metadata: an article's JSON-LD is a few
# kilobytes; the megabytes some pages embed are application state.
MAX_JSON_CHARS = 100_000
_JSON_LD = "application/ld+json"
_EMBEDDED_JSON = lxml.etree.XPath(
    '//script[@type="application/ld+json" or @type="application/settings+json"]'
)
_DECLARED_LANG = lxml.etree.XPath(
    '//head/meta[translate(@http-equiv, "CONTENT-LANGUAGE", "content-language")'
    ' = "content-language"]/@content | //head/meta[@property="og:locale"]/@content'
)
# htmldate without its extensive search: a date the page states, not a year found in its
# text (a copyright line made 1998-01-01 the date of Mozilla's pages), and bounded: the
# extensive search took 1.8 s on a 54 KB page.
_DATE_OPTIONS: dict[str, Any] = {"original_date": True, "extensive_search": False}
_NOT_TEXT = ("script", "style", "noscript", "template")
_CODE = (*_NOT_TEXT, "svg")  # what the visible-text fallback drops when nothing else is left


def extract_article(html: str, url: str | None = None, *, max_chars: int | None = None) -> Article:
    """The main text of a page (cut to `max_chars`) with title, author, date and language;
    a page longer than `MAX_HTML_CHARS` is read from its beginning."""
    if len(html) > MAX_HTML_CHARS:
        log.info("article.cut_markup", url=url, chars=len(html), kept=MAX_HTML_CHARS)
        html = html[:MAX_HTML_CHARS]
    data, words, recall = extraction_passes(html, url)
    text = combine(data.get("text") or "", words, recall)
    if OPENING_MIN_WORDS and data.get("dropped_prose") and text == data.get("text"):
        text = keep_opening(text, recall() or "", data.get("description"))
    text = clean_text(text, page_titles(data, html))
    if not text:
        text = visible_text(html)
        log.info("article.fallback_visible_text", url=url, chars=len(text))
    if max_chars is not None and len(text) > max_chars:
        text = text[:max_chars].rstrip()
    return Article(
        title=data.get("title") or _html_title(html),
        author=data.get("author"),
        date=data.get("date"),
        language=data.get("language"),
        text=text,
        word_count=count_words(text),
    )


def extraction_passes(
    html: str,
    url: str | None,
    *,
    opening: bool = OPENING_MIN_WORDS > 0,
    share: float | None = THIN_SHARE,
) -> tuple[dict[str, Any], int, Callable[[], str | None]]:
    """The precision pass's text with the page's metadata, the page's body words, and the
    recall pass to run on demand: one parse shared by both passes (trafilatura copies the
    tree it is given), empty elements removed first (`drop_empty`), the metadata read once
    (`page_metadata`), then scripts and styles dropped (`drop_code`): neither pass reads
    them, and each would copy and search them. `opening`: also tell whether the opening
    rule should look at the page (`dropped_prose`; the bench asks whatever the setting).

    The words are `page_words`, or all of the body's words when the precision pass holds at
    least `share` of those: an upper bound of `page_words`, so `combine` keeps the precision
    pass either way, without counting the links' words (as much again; `share` None: always
    `page_words`, for the bench's other shares)."""
    shared_stoplist()  # before any pass can build trafilatura's own copies
    tree = _load(html)
    if tree is None:
        return {}, 0, lambda: None
    drop_empty(tree)
    meta = page_metadata(tree, url)
    drop_code(tree)
    precise = extraction_pass(tree, url, EXTRACT_OPTIONS).get("text") or ""
    data = {**meta, "text": precise, "dropped_prose": opening and dropped_prose(tree, precise)}
    found: list[str | None] = []

    def recall() -> str | None:  # run once, whoever asks first
        if not found:
            options = RECALL_OPTIONS if precise else RESCUE_OPTIONS
            found.append(extraction_pass(tree, url, options).get("text"))
        return found[0]

    words = body_words(tree)
    if share is None or not precise or count_words(precise) < share * words:
        words -= _unread_words(tree)  # `page_words`, the body counted once
    return data, words, recall


# -- justext's stoplist, held once -------------------------------------------------------------
# On a page trafilatura's passes leave short or unclean, it asks justext, with the stoplists
# of every language. Left to itself, its first such page built a 154,000-word tuple (14 MB)
# and justext a lower-cased copy of it (27 MB, kept in `define_stoplist`'s cache): 41 MB held
# for the process's life, taken in the middle of a call (the soak's Python growth), and about
# 140 ms on that read. The same words, lower-cased once, are handed to both (about 18 MB).

_STOPLIST: frozenset[str] | None = None
_STOPLIST_LOCK = threading.Lock()


def shared_stoplist() -> frozenset[str]:
    """Every justext stoplist's words, lower-cased, built once: trafilatura's all-language
    stoplist, which justext's `define_stoplist` then takes as it is (the same set of words
    it would have made; any other stoplist still goes through justext's own)."""
    global _STOPLIST
    if _STOPLIST is not None:
        return _STOPLIST
    with _STOPLIST_LOCK:
        if _STOPLIST is None:
            words = frozenset(
                word.lower()
                for language in justext.get_stoplists()
                for word in justext.get_stoplist(language)
            )
            lower_case = justext.core.define_stoplist

            def define_stoplist(stoplist: Any) -> Any:
                return stoplist if stoplist is words else lower_case(stoplist)

            justext.core.define_stoplist = define_stoplist
            trafilatura.external.JT_STOPLIST = words  # type: ignore[assignment]
            _STOPLIST = words
    return _STOPLIST


def warm_up() -> None:
    """What a long-running process builds once, built before the first call needs it
    (the service starts it on a thread): the stoplist and one small extraction."""
    extract_article("<html><body><article><p>warm up</p></article></body></html>")


def dropped_prose(tree: Any, precise: str, first: int = 3) -> bool:
    """Whether one of the page's first `first` paragraphs that read as prose (`_is_prose`) is
    missing from the precision pass's text: then precision mode probably cut the article's
    opening or a run inside it, and the balanced pass is worth asking (`keep_opening`).
    Cheap: a walk over the first paragraphs, no second pass."""
    if not precise:
        return False
    kept = " ".join(precise.split())
    seen = 0
    for paragraph in tree.iter("p"):
        line = " ".join(paragraph.text_content().split())
        if not _is_prose(line, PROSE_MIN_WORDS):
            continue
        if line not in kept:
            return True
        seen += 1
        if seen >= first:
            return False
    return False


# Sentence shape: the line ends as a sentence does (a full stop, ! ?, a closing quote or
# bracket after one, or the Chinese and Japanese full stops).
_SENTENCE_END = re.compile(r"[.!?。！？][\"'”’»)\]]*$")


def _is_prose(line: str, min_words: int) -> bool:
    """A line of article text: enough words, ends as a sentence does, is no furniture line
    and is not a line of links or labels (most of its words start in lower case or are in a
    script without case)."""
    if count_words(line) < min_words or not _SENTENCE_END.search(line):
        return False
    if _is_furniture(line):
        return False
    words = line.split()
    capitalised = sum(1 for w in words if w[:1].isupper())
    return capitalised <= 0.6 * len(words)


def keep_opening(
    precise: str, balanced: str, description: str | None = None, min_words: int | None = None
) -> str:
    """The precision pass's text with what it dropped and the balanced pass kept, where that
    reads as article text: the balanced pass's lines before its first line that precision
    kept (the lede, a standfirst: the run of prose lines right before it, nearest first, up
    to the first that is not prose), and its prose lines between two lines precision kept
    (a run of Q&A paragraphs). A line that the page's own description opens with is kept
    even when it does not end as a sentence."""
    least = OPENING_MIN_WORDS if min_words is None else min_words
    if not least or not balanced:
        return precise
    lines = [line.strip() for line in precise.splitlines() if line.strip()]
    kept = {" ".join(line.split()) for line in lines}
    wider = [line.strip() for line in balanced.splitlines() if line.strip()]
    marks = [" ".join(line.split()) in kept for line in wider]
    if not any(marks):
        return precise
    start = marks.index(True)
    summary = _norm(description or "")

    def reads(line: str) -> bool:
        flat, words = " ".join(line.split()), _norm(line)
        agreed = len(summary) >= 40 and len(words) >= 40
        agreed = agreed and (words.startswith(summary[:120]) or summary.startswith(words))
        return agreed or _is_prose(flat, least)

    opening: list[str] = []
    for line in reversed(wider[:start]):
        if not reads(line):
            break
        opening.insert(0, line)
    inserts: dict[str, list[str]] = {}
    pending: list[str] = []
    for line, mark in zip(wider[start:], marks[start:], strict=True):
        if mark:
            if pending:
                inserts.setdefault(" ".join(line.split()), []).extend(pending)
            pending = []
        elif reads(line):
            pending.append(line)
        else:
            pending = []  # not a run of article text between two kept lines
    out = list(opening)
    for line in lines:
        out.extend(inserts.pop(" ".join(line.split()), []))
        out.append(line)
    return "\n".join(out) if len(out) > len(lines) else precise


def extraction_pass(html: Any, url: str | None, options: dict[str, Any]) -> dict[str, Any]:
    """trafilatura's extraction of markup (or of a tree from `trafilatura.load_html`, left
    unchanged) as a dict, without metadata (`page_metadata` reads it once); {} when it finds
    nothing or the markup breaks it."""
    try:
        doc = trafilatura.bare_extraction(html, url=url, with_metadata=False, **options)
    except (ValueError, TypeError, ParserError) as exc:  # malformed markup: fall back later
        log.warning("article.extractor_failed", url=url, error=str(exc))
        return {}
    return dict(doc.as_dict()) if doc is not None and hasattr(doc, "as_dict") else {}


def page_metadata(tree: Any, url: str | None) -> dict[str, Any]:
    """Title, author, date and language from the page's markup, read once and bounded:
    embedded JSON over `MAX_JSON_CHARS` is not parsed, the date is the one the page states
    (meta tags, `<time>`, structured data, the URL), not a search of its whole text, and so
    is the author (meta tags and JSON-LD: trafilatura's search of the markup for a byline
    copies and prunes the whole page, a third of the read path's time over plain
    trafilatura's)."""
    try:
        found = tm.examine_meta(tree)
        if found.author and " " not in found.author:  # trafilatura's own rule: no one-word names
            found.author = None
        with _json_bounded(tree):
            found = tm.extract_meta_json(tree, found)
        found.title = found.title or tm.extract_title(tree)
        found.url = tm.extract_url(tree, url)
        found.date = find_date(tree, url=found.url, **_DATE_OPTIONS)
        found.clean_and_trim()
    except (ValueError, TypeError, ParserError) as exc:  # malformed markup: no metadata
        log.warning("article.metadata_failed", url=url, error=str(exc))
        return {}
    return {
        "title": found.title,
        "author": found.author,
        "date": found.date,
        "language": _language(tree),
        "description": found.description,
    }


@contextmanager
def _json_bounded(tree: Any) -> Iterator[None]:
    """Hide embedded JSON longer than `MAX_JSON_CHARS` from trafilatura's metadata search
    (its minifying patterns and its fallback for JSON that does not parse took 1.5 s on one
    tabloid page), and give it back afterwards."""
    hidden = [(el, el.text) for el in _EMBEDDED_JSON(tree) if len(el.text or "") > MAX_JSON_CHARS]
    for element, _ in hidden:
        element.text = None
    try:
        yield
    finally:
        for element, text in hidden:
            element.text = text


def _language(tree: Any) -> str | None:
    """The page's declared language (`<html lang>`, else Content-Language or og:locale), as
    a lower-case primary subtag such as "en" or "ja"."""
    declared = tree.get("lang") or tree.get("xml:lang") or next(iter(_DECLARED_LANG(tree)), "")
    code = str(declared).strip().replace("_", "-").split("-")[0].lower()
    return code if code.isalpha() and 2 <= len(code) <= 3 else None


def drop_code(tree: Any) -> None:
    """Remove what trafilatura's clean-up deletes anyway, after each pass has copied and
    searched it: the `<head>` (its metadata read already), scripts but JSON-LD, styles,
    comments and inline SVG, keeping the text after each (the same text on every
    development page, 15% less time in the median pass)."""
    head = tree.find("head")
    if head is not None:
        _remove_keeping_tail(head)
    for element in list(tree.iter("script", "style", "svg", lxml.etree.Comment)):
        if element.tag == "script" and (element.get("type") or "").lower() == _JSON_LD:
            continue
        _remove_keeping_tail(element)


def combine(
    precise: str,
    page_words: int,
    recall: Callable[[], str | None],
    share: float = THIN_SHARE,
) -> str:
    """The precision pass, or the recall pass when the precision pass kept fewer than `share`
    of the recall pass's words, or found nothing at all (trafilatura's balanced mode and its
    own fallbacks find the article on pages where precision mode finds nothing: an unclosed
    `<header>` or `<nav>` that holds the whole body in the parsed tree; "" when neither finds
    anything: the visible-text fallback's case).

    The recall pass's words sit outside links (`page_words`, on every development page), so
    a precision pass with at least `share` of those is kept without paying for the second
    pass."""
    found = count_words(precise)
    if not found:
        return recall() or ""
    if found >= share * page_words:
        return precise
    wider = recall() or ""
    return wider if found < share * count_words(wider) else precise


def drop_empty(tree: Any) -> None:
    """Remove the elements that trafilatura's precision mode deletes when they are empty,
    keeping the text that follows each (its tail). Precision mode deletes that text with the
    element: an empty icon or anchor before a sentence (`<i class="icon"></i> Text`) took
    the sentence with it."""
    for element in reversed(list(tree.iter(*_CUT_WHEN_EMPTY))):
        if element.text is None and not len(element):
            _remove_keeping_tail(element)


def _remove_keeping_tail(element: Any) -> None:
    parent = element.getparent()
    if parent is None:
        return
    if element.tail:
        before = element.getprevious()
        if before is not None:
            before.tail = (before.tail or "") + element.tail
        else:
            parent.text = (parent.text or "") + element.tail
    parent.remove(element)


def page_words(tree: Any) -> int:
    """Words in the page's body text outside scripts, styles, `<noscript>` and links (0
    without a tree): what the balanced pass can add to the precision pass. Link text is not
    a strict bound (a paragraph's inline links are read), but on every development and
    evaluation page (1,288) the balanced pass replaced a thin precision pass only where the
    precision pass held less than `THIN_SHARE` of these words, and the menus and link lists
    that fill a page's body no longer make the read path pay for a second pass that finds
    nothing more (it ran on 103 of those pages, now on 51). Their texts are counted
    together: a walk over each element's ancestors took 8% of plain trafilatura's time."""
    return body_words(tree) - _unread_words(tree)


def body_words(tree: Any) -> int:
    """Words in the page's body text, all of it (0 without a body)."""
    body = tree.find("body") if tree is not None else None
    return count_words(body.text_content()) if body is not None else 0


def _unread_words(tree: Any) -> int:
    """Words in the body's links, scripts, styles, `<noscript>` and `<template>`: one count
    over their texts, each element's on its own (one inside another, which is rare, counts
    in both)."""
    body = tree.find("body") if tree is not None else None
    if body is None:
        return 0
    return count_words(" ".join(el.text_content() for el in body.iter("a", *_NOT_TEXT)))


# Whole lines that are page furniture in any article (matched case-insensitively), by kind,
# in English and in the languages a Nordic or European audience reads most (Swedish, Danish,
# Norwegian, German, Dutch, French, Spanish, Portuguese, Italian). A pattern matches a whole
# line only: a sentence that merely mentions sharing or cookies stays. Lines can be long and
# keep their whitespace (`<pre>`): where two quantifiers in a row could share a run of spaces
# (`\s*:?\s*`), the first takes it all (`*+`). Else "comments" and a few thousand spaces
# (a 5 KB page) took minutes, holding the GIL; what a pattern matches is the same.
_FURNITURE_KINDS: dict[str, tuple[str, ...]] = {
    "comment counters and prompts": (
        r"(?:\d+\s+)?(?:comments?|kommentare?|kommentarer?|commentaires?|comentarios?"
        r"|comentários?|commenti|reacties)(?:\s+insgesamt)?\s*+[:(]?\s*+\d*+\s*+\)?",
        r"(?:leave|post|add)\s+a\s+(?:comment|reply).*",
        r"tell\s+us\s+what\s+you\s+think.*|join\s+the\s+(?:conversation|discussion).*",
        r"(?:schreiben|hinterlassen)\s+sie\s+einen\s+kommentar.*|kommentar\s+schreiben.*",
        r"(?:lämna|skriv)\s+en\s+kommentar.*|kommentera(?:\s+artikeln)?",
        r"(?:laissez|laisser|ajouter|écrire)\s+un\s+commentaire.*",
        r"(?:deja|dejar|escribe)\s+(?:un|tu)\s+comentario.*|deixe\s+(?:um|seu)\s+comentário.*",
        r"lascia\s+un\s+commento.*|(?:laat\s+een|plaats\s+een)\s+reactie(?:\s+achter)?.*",
    ),
    "share and print buttons": (
        r"share(?:\s+(?:this|on|via)\b.*)?|(?:tweet|e-?mail|print|whatsapp|pin\s+it)",
        r"(?:(?:artikel|beitrag|seite)\s+)?teilen(?:\s+(?:auf|über|per|mit)\b.{0,80})?|drucken",
        r"dela(?:\s+(?:på|via|artikeln|sidan|inlägget)\b.{0,80})?|skriv\s+ut|mejla|tipsa",
        r"del(?:\s+(?:på|artikkelen|artiklen)\b.{0,80})?|deel(?:\s+(?:op|via|dit)\b.{0,80})?",
        r"delen|printen|afdrukken",
        r"partager(?:\s+(?:sur|par|via|cet\s+article)\b.{0,80})?|imprimer",
        r"compartir(?:\s+(?:en|por|vía|via|esta|este)\b.{0,80})?|imprimir",
        r"(?:compartilhar|partilhar)(?:\s+(?:no|na|em|por|via)\b.{0,80})?",
        r"condividi(?:\s+(?:su|via|questo\s+articolo)\b.{0,80})?|stampa",
    ),
    "follow prompts": (
        r"follow\s+(?:us|@\w+)\b.*|like\s+us\s+on\s+facebook.*",
        r"(?:folgen\s+sie|folge)\s+uns\b.*|följ\s+oss\b.*|følg\s+(?:os|oss)\b.*",
        r"volg\s+ons\b.*|suivez[-\s]nous\b.*|s[ií]guenos\b.*|siga[-\s]nos\b.*|seguici\b.*",
    ),
    "newsletter prompts": (
        r"(?:click\s+here\s+to\s+)?(?:sign\s+up|subscribe)\b.{0,80}(?:newsletter|updates|inbox).*",
        r"(?:jetzt\s+)?(?:(?:unseren|den|zum)\s+)?newsletter\s+(?:abonnieren|bestellen).{0,80}",
        r"(?:melden\s+sie\s+sich|melde\s+dich|abonnieren\s+sie)\b.{0,80}newsletter.*",
        r"(?:prenumerera|anmäl\s+dig|registrera\s+dig)\b.{0,80}nyhetsbrev.*",
        r"(?:tilmeld\s+dig|abonner\s+på|meld\s+deg\s+på)\b.{0,80}nyhe(?:ds|ts)brev.*",
        r"(?:abonneer|schrijf\s+je\s+in|meld\s+je\s+aan)\b.{0,80}nieuwsbrief.*",
        r"(?:abonnez[-\s]vous|inscrivez[-\s]vous)\b.{0,80}(?:newsletter|lettre).*",
        r"(?:suscr[ií]bete|suscr[ií]base|reg[ií]strate)\b.{0,80}(?:newsletter|bolet[ií]n).*",
        r"(?:assine|inscreva[-\s]se|cadastre[-\s]se)\b.{0,80}(?:newsletter|boletim).*",
        r"(?:iscriviti|abbonati)\b.{0,80}newsletter.*",
    ),
    "click-here prompts": (r".{0,120}\bclick\s+here\s+for\s+more\s+information\.?",),
    "links to other articles": (
        r"(?:related|related\s+(?:posts?|articles?|stories|content|reading)|read\s+more|see\s+also"
        r"|you\s+may\s+(?:also\s+)?like|recommended(?:\s+for\s+you)?|more\s+stories"
        r"|mehr\s+zum\s+thema|lesen\s+sie\s+(?:auch|mehr)|lies\s+auch|auch\s+interessant"
        r"|das\s+könnte\s+sie\s+(?:auch\s+)?interessieren|(?:zum\s+)?weiterlesen"
        r"|(?:verwandte|ähnliche|weitere)\s+(?:artikel|beiträge|themen)"
        r"|läs\s+(?:också|även|mer)|relaterat|relaterade\s+(?:artiklar|nyheter)|se\s+även"
        r"|(?:læs|les)\s+(?:også|mere|mer)|relater(?:ede|te)\s+artikler"
        r"|lees\s+(?:ook|meer|verder)|gerelateerde\s+(?:artikelen|berichten)|bekijk\s+ook"
        r"|(?:à\s+)?lire\s+(?:aussi|également|la\s+suite)|voir\s+aussi|sur\s+le\s+même\s+sujet"
        r"|articles?\s+(?:similaires|liés|connexes)"
        r"|le[ae]\s+también|leer\s+más|ver\s+también|te\s+puede\s+interesar"
        r"|(?:noticias|artículos)\s+relacionad[oa]s|leia\s+(?:também|mais)|veja\s+também"
        r"|saiba\s+mais|(?:notícias|matérias)\s+relacionadas|leggi\s+anche"
        r"|potrebbe\s+interessarti|articoli\s+correlati)"
        r"\s*[:.\-–—]?(?:\s.{0,160})?",
        r"view\s+this\s+post\s+on\s+instagram|sieh\s+dir\s+diesen\s+beitrag\s+auf\s+instagram\s+an",
        r"visa\s+det\s+här\s+inlägget\s+på\s+instagram|voir\s+cette\s+publication\s+sur\s+instagram",
        r"ver\s+esta\s+publicación\s+en\s+instagram|bekijk\s+dit\s+bericht\s+op\s+instagram",
    ),
    "advertising labels": (
        r"advertisement|sponsored(?:\s+content)?|story\s+continues\s+below.*",
        r"anzeige|werbung|gesponsert|annons|sponsrad|annonce|annonse|advertentie|gesponsord",
        r"publicité|sponsorisé|publicidad|patrocinado|publicidade|pubblicità|sponsorizzato",
        r"(?:der\s+)?artikel\s+(?:geht|wird)\s+unter\s+der\s+anzeige\s+(?:weiter|fortgesetzt).*",
        r"artikeln\s+fortsätter\s+(?:nedan|under\s+annonsen).*|la\s+suite\s+après\s+(?:cette\s+)?"
        r"(?:la\s+)?publicité.*",
    ),
    "cookie prompts": (
        r"(?:this\s+(?:web)?site|we)\s+uses?\s+cookies.*|accept\s+(?:all\s+)?cookies.*",
        r"(?:diese\s+(?:web)?seite|diese\s+website|wir)\s+(?:verwendet|verwenden|nutzt|nutzen)"
        r"\s+cookies.*|(?:alle\s+)?cookies\s+(?:akzeptieren|zulassen).*",
        r"(?:vi|(?:den\s+här|denna)\s+(?:webbplats|sajt|sida)(?:en|n)?)\s+använder"
        r"\s+(?:sig\s+av\s+)?(?:kakor|cookies).*|(?:acceptera|godkänn|tillåt)\s+(?:alla\s+)?"
        r"(?:kakor|cookies).*",
        r"vi\s+(?:bruger|bruker)\s+cookies.*|(?:accepter|godta)\s+(?:alle\s+)?cookies.*",
        r"(?:deze\s+(?:web)?site|wij|we)\s+gebruik(?:t|en)\s+cookies.*|(?:alle\s+)?cookies"
        r"\s+accepteren.*",
        r"(?:ce\s+site|nous)\s+(?:utilise|utilisons)\s+(?:des\s+)?cookies.*|accepter\s+"
        r"(?:tous\s+)?(?:les\s+)?cookies.*",
        r"(?:este\s+sitio\s+(?:web\s+)?|esta\s+web\s+)?(?:utiliza(?:mos)?|usa(?:mos)?)\s+cookies.*"
        r"|aceptar\s+(?:todas\s+)?(?:las\s+)?cookies.*|aceitar\s+(?:todos\s+)?(?:os\s+)?cookies.*",
        r"(?:questo\s+sito|utilizziamo)\s+(?:utilizza\s+)?(?:i\s+)?cookie.*|accetta\s+(?:tutti\s+)?"
        r"(?:i\s+)?cookie.*",
    ),
    "tag and category lines": (
        r"filed\s+under\s*:.*",
        r"(?:tags?|categor(?:y|ies)|schlagw(?:ö|oe)rter|stichw(?:ö|oe)rter|themen|kategorien?"
        r"|taggar|kategori(?:er)?|ämnen|emner|étiquettes|mots[-\s]clés|catégories?|etiquetas"
        r"|categor[ií]as?|temas|categori[ae]|argomenti|trefwoorden|categorieën)\s*:.{0,200}",
    ),
    "reading times": (
        r"(?:\d+\s*)?min(?:ute)?s?\s+read|reading\s+time\s*:.*|tempo\s+de\s+leitura\s*:.*",
        r"(?:\d+\s*)?min(?:\.|uten)?\s+lesezeit|(?:lesezeit|lesedauer)\s*+:?\s*+\d.{0,20}",
        r"lästid\s*+:?\s*+\d.{0,20}|(?:\d+\s*)?min(?:uter)?\s+läsning|leestijd\s*+:?\s*+\d.{0,20}",
        r"(?:\d+\s*)?min(?:\.|utes?|utos?|uti)?\s+(?:de\s+lecture|de\s+lectura|de\s+leitura"
        r"|di\s+lettura)|(?:temps|tiempo|tempo)\s+(?:de|di)\s+(?:lecture|lectura|lettura)\s*:.*",
    ),
}
# A pattern that opens with `.{0,N}` is tried at every length up to N on every line: the
# click-here prompts are matched only on a line that says "click" (they took a third of the
# furniture test's time).
_CUED_KINDS = {"click-here prompts": "click"}
_FURNITURE = re.compile(
    "^(?:"
    + "|".join(p for kind, ps in _FURNITURE_KINDS.items() if kind not in _CUED_KINDS for p in ps)
    + ")$",
    re.IGNORECASE,
)
_CUED = tuple(
    (cue, re.compile("^(?:" + "|".join(_FURNITURE_KINDS[kind]) + ")$", re.IGNORECASE))
    for kind, cue in _CUED_KINDS.items()
)
# Starts only where a run of whitespace starts: a search from inside each run was quadratic.
_CLICK_TO_TWEET = re.compile(r"(?<!\s)\s*click\s+to\s+tweet\s*$", re.IGNORECASE)
_WORDS = re.compile(r"\w+", re.UNICODE)


def clean_text(text: str, titles: tuple[str, ...] = ()) -> str:
    """Drop the headline when it opens the text (it is the article's title) and whole
    lines of page furniture; keep everything else as it is."""
    lines = text.strip().splitlines()
    if "tweet" in text.lower():  # the pattern's search costs more than the rest of the clean-up
        lines = [_CLICK_TO_TWEET.sub("", line) for line in lines]
    lines = [line.rstrip() for line in lines]
    heads = {_norm(t) for t in titles if len(_norm(t).split()) >= 3}
    firsts = {head.split(" ", 1)[0] for head in heads}
    kept: list[str] = []
    for line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        if _is_furniture(stripped) or (heads and _is_headline(stripped, heads, firsts)):
            continue
        kept.append(line)
    return "\n".join(kept).strip()


def _is_furniture(line: str) -> bool:
    """The whole line is page furniture (`_FURNITURE_KINDS`)."""
    if _FURNITURE.match(line):
        return True
    lower = line.lower()
    return any(cue in lower and pattern.match(line) for cue, pattern in _CUED)


def _norm(text: str) -> str:
    return " ".join(_WORDS.findall(text.lower()))


def _is_headline(line: str, heads: set[str], firsts: set[str]) -> bool:
    """The line says the page's title (or its title without the site name). `firsts`: the
    first word of each title; a line whose first word is none of them is not normalised."""
    if len(line) > 300:
        return False
    first = _WORDS.search(line.lower())
    if first is None or first.group() not in firsts:
        return False
    words = _norm(line)
    if len(words.split()) < 3:
        return False
    return any(
        words == head or (head.startswith(words) and len(words) >= 0.6 * len(head))
        for head in heads
    )


def page_titles(data: dict[str, Any], html: str) -> tuple[str, ...]:
    """What the page calls itself: the extracted title, and `<title>`."""
    return tuple(t for t in (data.get("title"), _html_title(html)) if t)


def visible_text(html: str) -> str:
    """Body text without scripts, styles, navigation and forms, one block per line; when
    that leaves nothing (an unclosed `<header>` or `<nav>` holds the whole body in the
    parsed tree), the body text without scripts and styles only."""
    for hidden in (_INVISIBLE, _CODE):
        root = _parse(html)
        if root is None:
            return ""
        for el in root.xpath("//" + " | //".join(hidden)):
            el.drop_tree()
        body = root.find("body")
        lines = (" ".join(line.split()) for line in (body if body is not None else root).itertext())
        text = _BLANK_LINES.sub("\n", "\n".join(line for line in lines if line)).strip()
        if text:
            return text
    return ""


def _html_title(html: str) -> str | None:
    """The document's `<title>` (read from the markup: no second full parse of the page)."""
    end = min(len(html), _TITLE_WITHIN)
    opening = _TITLE_OPEN.search(html, 0, end)
    # The first `<title` decides: a later one ends its tag no sooner, so finds no other `</title>`.
    tag_end = html.find(">", opening.end(), end) if opening else -1
    closing = _TITLE_CLOSE.search(html, tag_end + 1, end) if tag_end != -1 else None
    if closing is None:
        return None
    inner = html[tag_end + 1 : closing.start()]
    title = " ".join(lxml.html.fromstring(f"<p>{inner}</p>").text_content().split())
    return title or None


def _load(html: str) -> Any:
    """The page as trafilatura parses it (None when it cannot)."""
    try:
        return trafilatura.load_html(html)
    except (ValueError, TypeError, ParserError) as exc:
        log.warning("article.parse_failed", error=str(exc))
        return None


def _parse(html: str) -> Any:
    if not html.strip():
        return None
    try:
        return lxml.html.fromstring(html)
    except (ParserError, ValueError):
        return None
