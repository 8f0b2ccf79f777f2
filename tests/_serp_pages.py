"""Google results pages of 2025-2026, built for this project to the shape of the real ones.

No public page with an AI Overview may be copied here (tests/fixtures/serp/built/README.md).
These are written from what public parsers of 2025-2026 document about the markup: the
overview's block (`#eKIzJc`, a hidden `<h1>` and a visible label with its heading, the
`EYwa3d` controller, the body's paragraphs, section headings and lists, inline citation
buttons, the sources tray in a hidden dialog, the disclaimer, feedback and "Dive deeper"
rows, the "Show more" control over a `max-height` wrapper, the two hidden state messages),
the 2024-2025 "SGE" layout (paragraphs in `rPeykc`, a source list of `LLtSOc` cards, the
disclaimer sent as `window.jsl.dh` script), the organic results with their 2026 "Read more"
link, and the forum and short-video blocks. Class names are the ones seen in 2025-2026, on
purpose: the parser must not depend on them (tests rename them all and parse again).

`python -m tests._serp_pages` writes the pages into tests/fixtures/serp/built/.
"""

from __future__ import annotations

import html
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

OUT = Path(__file__).parent / "fixtures" / "serp" / "built"

# What the interface says, by language (the heading and states as the public parsers
# document them; "Read more" in Korean and Japanese is unconfirmed).
UI = {
    "en": {
        "heading": "AI Overview",
        "unavailable": "An AI Overview is not available for this search",
        "error": "Can't generate an AI overview right now. Try again later.",
        "disclaimer": "AI responses may include mistakes.",
        "learn": "Learn more",
        "more": "Show more",
        "deeper": "Dive deeper in AI Mode",
        "read_more": "Read more",
        "new_tab": "Opens in new tab.",
        "results": "Search Results",
        "searching": "Searching",
        "people": "What people are saying",
        "forums": "Discussions and forums",
        "shorts": "Short videos",
        "paa": "People also ask",
    },
    "ko": {
        "heading": "AI 개요",
        "unavailable": "AI 개요가 제공되지 않습니다",
        "error": "AI 개요를 생성할 수 없습니다",
        "disclaimer": "AI 답변에 오류가 있을 수 있습니다.",
        "learn": "자세히 알아보기",
        "more": "더보기",
        "deeper": "AI 모드에서 더 자세히 알아보기",
        "read_more": "더보기",
        "new_tab": "새 탭에서 열립니다",
        "results": "검색결과",
        "searching": "검색 중",
        "people": "사람들의 의견",
        "forums": "토론 및 포럼",
        "shorts": "짧은 동영상",
        "paa": "관련 질문",
    },
    "ja": {
        "heading": "AI による概要",
        "unavailable": "この検索では AI による概要を表示できません",
        "error": "現在、AI による概要を生成できません",
        "disclaimer": "AI の回答には間違いが含まれている場合があります。",
        "learn": "詳細",
        "more": "もっと見る",
        "deeper": "AI モードで詳しく調べる",
        "read_more": "続きを読む",
        "new_tab": "新しいタブで開きます",
        "results": "ウェブ検索結果",
        "searching": "検索しています",
        "people": "みんなの意見",
        "forums": "ディスカッションとフォーラム",
        "shorts": "ショート動画",
        "paa": "他の人はこちらも質問",
    },
}


@dataclass
class Overview:
    """What the overview says: paragraphs, then an optional section with a list."""

    paragraphs: list[str]
    section: str = ""
    items: list[tuple[str, str]] = field(default_factory=list)  # (bold lead, text)
    sources: list[tuple[str, str, str]] = field(default_factory=list)  # (title, url, snippet)


@dataclass
class Result:
    title: str
    url: str
    snippet: str
    date: str = ""


SKY = Overview(
    paragraphs=[
        "The sky appears blue because of Rayleigh scattering: molecules in the air scatter "
        "shorter blue wavelengths of sunlight much more than longer red ones.",
        "This scattered blue light reaches our eyes from every direction of the sky.",
    ],
    section="Why not violet?",
    items=[
        ("Sunlight: ", "the sun emits less violet light than blue light."),
        ("Our eyes: ", "human eyes are more sensitive to blue than to violet."),
    ],
    sources=[
        ("Why Is the Sky Blue? | NASA Space Place", "https://spaceplace.nasa.gov/blue-sky/", "A"),
        (
            "Rayleigh scattering - Wikipedia",
            "https://en.wikipedia.org/wiki/Rayleigh_scattering",
            "B",
        ),
        ("Why is the sky blue? - Met Office", "https://www.metoffice.gov.uk/weather/sky", "C"),
    ],
)
SKY_RESULTS = [
    Result(
        "Why Is the Sky Blue? | NASA Space Place",
        "https://spaceplace.nasa.gov/blue-sky/en/",
        "Sunlight reaches Earth's atmosphere and is scattered in all directions by all the "
        "gases and particles in the air. Blue light is scattered more than the other colors.",
        "Jan 10, 2026",
    ),
    Result(
        "Rayleigh scattering - Wikipedia",
        "https://en.wikipedia.org/wiki/Rayleigh_scattering",
        "Rayleigh scattering is the scattering of light by particles much smaller than the "
        "wavelength of the radiation. It makes the sky blue most of the time.",
    ),
    Result(
        "Why is the sky blue? | Britannica",
        "https://www.britannica.com/story/why-is-the-sky-blue",
        "The sky is blue because of the way sunlight interacts with the atmosphere.",
    ),
]
KO_OVERVIEW = Overview(
    paragraphs=[
        "하늘이 파랗게 보이는 이유는 레일리 산란 때문입니다. 공기 분자는 파장이 짧은 파란빛을 "
        "붉은빛보다 훨씬 많이 산란시킵니다.",
    ],
    section="주요 요인",
    items=[
        ("햇빛: ", "태양은 보라색 빛보다 파란 빛을 더 많이 냅니다."),
        ("눈: ", "사람의 눈은 파란색에 더 민감합니다."),
    ],
    sources=[("하늘이 파란 이유 - 위키백과", "https://ko.wikipedia.org/wiki/레일리_산란", "A")],
)
KO_RESULTS = [
    Result(
        "레일리 산란 - 위키백과",
        "https://ko.wikipedia.org/wiki/레일리_산란",
        "레일리 산란은 빛의 파장보다 작은 입자에 의한 산란입니다.",
    ),
    Result(
        "하늘은 왜 파란가요? - 과학 동아",
        "https://science.example.kr/sky",
        "하늘이 파란 이유를 쉽게 설명합니다.",
    ),
]
JA_OVERVIEW = Overview(
    paragraphs=[
        "空が青く見えるのはレイリー散乱のためです。空気中の分子は、波長の短い青い光を赤い光より"
        "もずっと強く散乱させます。",
    ],
    section="主な理由",
    items=[("太陽光: ", "太陽は紫の光より青い光を多く出しています。")],
    sources=[("レイリー散乱 - Wikipedia", "https://ja.wikipedia.org/wiki/レイリー散乱", "A")],
)
JA_RESULTS = [
    Result(
        "レイリー散乱 - Wikipedia",
        "https://ja.wikipedia.org/wiki/レイリー散乱",
        "レイリー散乱とは、光の波長よりも小さいサイズの粒子による光の散乱である。",
    ),
    Result(
        "空はなぜ青いの？ | 科学館",
        "https://science.example.jp/sky",
        "空が青い理由をわかりやすく解説します。",
    ),
]


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def overview_body_2026(ov: Overview, lang: str) -> str:
    """The answer itself: paragraphs with inline citation buttons, a section, a list."""
    cite = (
        '<span class="uJ19be notranslate"><span class="vKEkVd"><button class="rBl3me" '
        'data-icl-uuid="u{n}" aria-label="View related links"><span class="wiMplc"></span>'
        "</button></span></span>"
    )
    parts = []
    for n, text in enumerate(ov.paragraphs):
        first, _, rest = text.partition(" ")
        parts.append(
            f'<div class="Y3BBE" jscontroller="zcfIf"><strong class="Yjhzub">{esc(first)}</strong>'
            f" {esc(rest)}{cite.format(n=n)}<!--Sv6Kpe[]--></div>"
        )
    if ov.section:
        parts.append(f'<div class="otQkpb" role="heading" aria-level="3">{esc(ov.section)}</div>')
    if ov.items:
        items = "".join(
            f'<li jscontroller="vsuOFb"><span class="T286Pc"><strong class="Yjhzub">{esc(b)}</strong>'
            f"{esc(t)}</span></li>"
            for b, t in ov.items
        )
        parts.append(
            f'<div style="display: contents" id="sdh_1"><ul class="KsbFXc U6u95">{items}</ul></div>'
        )
    return (
        '<div class="mZJni Dn7Fzd" jsname="KFl8ub" jscontroller="Aoijq">'
        + "".join(parts)
        + "</div>"
    )


def sources_tray_2026(ov: Overview, lang: str) -> str:
    cards = "".join(
        f'<li class="CyMdWb"><div class="MFrAxb BKnikc" data-src-id="{n}"><a class="NDNGvf" '
        f'href="{esc(url)}#:~:text=sky" aria-label="{esc(title)}. {esc(UI[lang]["new_tab"])}">'
        f'<div class="Nn35F">{esc(title)}</div><span class="vhJ6Pe">{esc(snippet)} source text'
        f'</span><span class="Z1JFYc"><span class="R0r5R">{esc(url.split("/")[2])}</span></span>'
        '</a><div role="button" aria-label="About this result"></div></div></li>'
        for n, (title, url, snippet) in enumerate(ov.sources)
    )
    return (
        '<div class="ofHStc Dn7Fzd" jscontroller="Oh6VO"><div class="wDa0n notranslate" '
        f'role="dialog" style="display:none"><ul class="bTFeG">{cards}</ul></div>'
        f'<div class="jKhXsc"><ul class="EJw9bc">{cards.replace("CyMdWb", "jydCyd")}</ul>'
        '<div class="BjvG9b" role="button" aria-label="Show all related links">'
        '<span class="zJR8l">Show all</span></div></div></div>'
    )


def overview_2026(
    ov: Overview | None, lang: str, *, state: str = "ready", expanded: bool = False
) -> str:
    """The whole overview block; `state`: ready | loading | unavailable | error."""
    ui = UI[lang]
    states = (
        f'<span class="YWpX0d" jsname="lGsj1" style="{"" if state == "unavailable" else "display:none"}">'
        f"{esc(ui['unavailable'])}</span>"
        f'<span class="YWpX0d" jsname="L1sC6e" style="{"" if state == "error" else "display:none"}">'
        f"{esc(ui['error'])}</span>"
    )
    if state == "loading" or ov is None:
        content = (
            f'<div class="VbHg3">{esc(ui["searching"])}</div>'
            '<div class="rNSxBe GkDqAd" jsname="HetLde" role="progressbar" '
            'aria-valuetext="Generating" style="height:295px"></div>'
            if state == "loading"
            else ""
        )
        body = ""
    else:
        content = ""
        style = (
            "max-height: none; min-height: auto; overflow: visible;"
            if expanded
            else ("max-height:383px;min-height:383px;overflow:hidden")
        )
        body = (
            f'<div class="h7Tj7e{" zc75bb" if expanded else ""}" data-fh tabindex="-1" style="{style}">'
            '<div class="s7d4ef" jsname="V3qe9d"><div class="D5ad8b" id="m-x-content">'
            f'<div class="FkX2oe" data-subtree="aimc"><div class="pOOWX" data-rl="{lang}">'
            f"{overview_body_2026(ov, lang)}</div></div>{sources_tray_2026(ov, lang)}"
            '<div class="DuQANe MSJHRb">'
            f'{esc(ui["disclaimer"])} <a href="https://support.google.com/websearch?p=ai_overviews&amp;hl={lang}" '
            f'aria-label="Learn more about Generative AI. Opens in new tab.">{esc(ui["learn"])}</a></div>'
            f'<div aria-hidden="true"><div class="DuQANe MSJHRb ZgCIV">{esc(ui["disclaimer"])}</div></div>'
            '<g-bubble><span class="c5aZPb" aria-label="Positive feedback">Good</span>'
            '<span class="c5aZPb" aria-label="Negative feedback">Bad</span></g-bubble>'
            '<div class="iWoFNc AOIKH" jsname="ruVSAc" role="button"><div class="saArie" '
            f'jsname="YWNrxc">{esc(ui["deeper"])}</div></div>'
            "</div></div></div>"
            f'<div class="Jzkafd" jsname="rPRdsc" role="button" aria-label="{esc(ui["more"])} AI Overview" '
            f'aria-controls="m-x-content" aria-expanded="{"true" if expanded else "false"}" '
            f'tabindex="0"><span>{esc(ui["more"])}</span></div>'
        )
    return (
        '<div id="eKIzJc" jsname="ZLxsqf" data-lhcontainer="1"><div class="YzCcne" data-mcpr>'
        '<h1 style="clip:rect(1px,1px,1px,1px);height:1px;overflow:hidden;position:absolute;'
        f'white-space:nowrap;width:1px">{esc(ui["heading"])}</h1><div class="hdzaWe">'
        '<div class="EyBRub jUja0e" jscontroller="EYwa3d" jsname="dEwkXc" data-subtree="mfc">'
        f'<div class="Fzsovc" jsname="cUzNTd" aria-hidden="true">{esc(ui["heading"])}</div>'
        f"{states}{content}{body}</div></div></div></div>"
    )


def organic_2026(results: list[Result], lang: str, first: int = 0) -> str:
    """Organic results with the 2026 snippet: a date, the text, a "Read more" link."""
    blocks = []
    for n, r in enumerate(results, start=first):
        date = f'<span class="YrbPuc"><span>{esc(r.date)}</span> — </span>' if r.date else ""
        blocks.append(
            f'<div class="MjjYud"><div class="A6K0A" data-rpos="{n}"><div class="wHYlTd" '
            f'jscontroller="SC7lYd"><div class="N54PNb BToiNc"><div class="yuRUbf"><a href="{esc(r.url)}" '
            f'jsname="UWckNb"><h3 class="LC20lb MBeuO DKV0Md" id="t{n}">{esc(r.title)}</h3>'
            f'<cite class="qLRx3b">{esc(r.url.split("/")[2])} › {esc(r.url.split("/")[-2] or "page")}</cite></a></div>'
            f'<div class="kb0PBd A9Y9g" data-snf="nke7rc" data-sncf="1"><div class="VwiC3b yXK7lf p4wth r025kc Hdw6tb" '
            f'style="-webkit-line-clamp:2">{date}<span>{esc(r.snippet)}</span>'
            f'<a class="vzmbzf" href="{esc(r.url)}#:~:text={esc(r.snippet.split(" ")[0])}" '
            f'aria-describedby="t{n}"><span>{esc(UI[lang]["read_more"])}</span></a>'
            "</div></div></div></div></div></div>"
        )
    return "".join(blocks)


def extras_2026(lang: str) -> str:
    """The blocks between the results that are not organic: forums, short videos, PAA."""
    ui = UI[lang]
    posts = "".join(
        f'<div class="LJ7wUe"><a href="https://www.reddit.com/r/askscience/comments/{n}/sky/">'
        f'<div role="heading" aria-level="3">Forum post {n} about the sky</div></a>'
        f'<div class="LbKnXb">Reddit · r/askscience</div></div>'
        for n in range(2)
    )
    shorts = "".join(
        f'<a class="rIRoqf" href="https://www.youtube.com/shorts/short{n}"><div role="heading" '
        f'aria-level="3">Sky short {n}</div><span class="xFMKFe">YouTube · 0:4{n}</span></a>'
        for n in range(2)
    )
    return (
        '<div class="ULSxyf"><div class="MjjYud"><div class="A6K0A"><g-section-with-header '
        'class="yG4QQe TBC9ub"><span class="mgAbYb RES9jf IFnjPb JGD2rd" role="heading" '
        f'aria-level="2"><div class="jUUgH"><span class="sOq4Gc">{esc(ui["people"])}</span></div>'
        f"</span>{posts}</g-section-with-header></div></div></div>"
        '<div class="MjjYud"><div class="A6K0A"><div class="IFnjPb" role="heading" aria-level="2">'
        f'{esc(ui["forums"])}</div><div class="JlqpRe"><a href="https://forum.example.com/t/sky">'
        '<div role="heading" aria-level="3">Why the sky is blue (forum thread)</div></a>'
        "</div></div></div>"
        '<div class="MjjYud"><div class="A6K0A"><span class="IFnjPb" role="heading" aria-level="2">'
        f"{esc(ui['shorts'])}</span>{shorts}</div></div>"
        '<div class="MjjYud"><div class="A6K0A"><span class="mgAbYb RES9jf YC72Wc IFnjPb" '
        f'role="heading" aria-level="2">{esc(ui["paa"])}</span>'
        '<div class="related-question-pair" data-q="Why is the sunset red?"><div role="button">'
        "<span>Why is the sunset red?</span></div></div></div></div>"
    )


# Google's own "Show more": the page's script opens the wrapper (no class names, as renamed
# pages keep working).
EXPAND_SCRIPT = """<script>document.addEventListener('click', (e) => {
  const control = e.target.closest('[aria-controls="m-x-content"]');
  if (!control) return;
  const box = document.getElementById('m-x-content').closest('[data-fh]');
  box.style.maxHeight = 'none'; box.style.minHeight = 'auto'; box.style.overflow = 'visible';
  control.setAttribute('aria-expanded', 'true'); control.style.display = 'none';
});</script>"""
OVERVIEW_STYLE = """<style>body{font:16px arial,sans-serif;margin:0 0 0 24px;max-width:760px}
#eKIzJc{border-bottom:1px solid #ddd;padding:8px 0 16px}.Y3BBE,li{line-height:24px}
[role=dialog]{display:none}[data-fh]{overflow:hidden}
[aria-controls]{cursor:pointer;color:#1a0dab;padding:8px 0;display:block}
cite{display:block;color:#555}h3{margin:4px 0;font-size:20px;color:#1a0dab}
.MjjYud{margin:0 0 28px}.Fzsovc{font-weight:bold;font-size:18px;margin:0 0 8px}</style>"""


def page_2026(
    query: str,
    lang: str = "en",
    ov: Overview | None = SKY,
    results: list[Result] | None = None,
    *,
    state: str = "ready",
    expanded: bool = False,
    extras: bool = True,
    padding_kb: int = 0,
    late_ms: int | None = None,
) -> str:
    """A 2026 desktop results page. `late_ms`: the overview arrives by script after that long
    (None: in the page; -1: never, the placeholder stays); `padding_kb`: inline scripts and
    styles to bring the page to a real one's weight (about 60% of 1.2-1.8 MB)."""
    ui = UI[lang]
    results = SKY_RESULTS if results is None else results
    if late_ms is None:
        top = (
            overview_2026(ov, lang, state=state, expanded=expanded)
            if (ov or state != "ready")
            else ""
        )
        late = ""
    else:
        top = overview_2026(None, lang, state="loading")
        ready = overview_2026(ov, lang, state="ready", expanded=expanded)
        late = (
            ""
            if late_ms < 0
            else f"<script>setTimeout(() => {{ document.getElementById('eKIzJc').outerHTML = "
            f"{_js_string(ready)}; }}, {late_ms});</script>"
        )
    return (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8"><title>{esc(query)} - Google Search</title>'
        f'{OVERVIEW_STYLE}{_padding(padding_kb)}</head><body><div id="main"><div id="rcnt">'
        f'<div class="bzXtMb M8OgIe"><h1 class="bNg8Rb OhScic zsYMMe BBwThe">{esc(ui["results"])}</h1>'
        f'{top}</div><div id="center_col"><div id="res"><div id="search"><div id="rso">'
        f"{organic_2026(results[:1], lang)}{extras_2026(lang) if extras else ''}"
        f"{organic_2026(results[1:], lang, first=1)}"
        f"</div></div></div></div></div></div>{EXPAND_SCRIPT}{late}</body></html>"
    )


def page_2025_sge(query: str, ov: Overview = SKY, results: list[Result] | None = None) -> str:
    """A 2025 page in the SGE layout: the label as a level-2 heading, paragraphs in
    `rPeykc`, the source cards, and the disclaimer sent as a deferred script part."""
    results = SKY_RESULTS if results is None else results
    paras = "".join(
        f'<div class="WaaZC"><div class="rPeykc"><span>{esc(p)}</span><span class="pjBG2e" '
        f'data-cid="c{n}"><div class="NPrrbc"><div class="BMebGe" jsname="HtgYJd" role="button" '
        f'aria-label="View related links"></div></div></span></div></div>'
        for n, p in enumerate(ov.paragraphs)
    )
    section = (
        f'<div class="WaaZC"><div class="rPeykc uP58nb"><span role="heading" aria-level="2">'
        f'{esc(ov.section)}</span></div></div><div class="WaaZC"><ul jscontroller="M2ABbc">'
        + "".join(f"<li><span><strong>{esc(b)}</strong>{esc(t)}</span></li>" for b, t in ov.items)
        + "</ul></div>"
    )
    cards = "".join(
        f'<li class="LLtSOc"><a class="KEVENd" href="{esc(u)}" aria-label="{esc(t)}"><div class="mNme1d">'
        f'{esc(t)}</div><span class="gxZfx">Sep 29, 2022 — {esc(s)}</span><div class="R8BTeb">{esc(u.split("/")[2])}</div></a></li>'
        for t, u, s in ov.sources
    )
    disclaimer = '<div class="DuQANe MSJHRb ZgCIV">Generative AI is experimental. <a class="NOo3C" href="https://support.google.com/websearch?p=ai_overviews">Learn more</a></div>'
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(query)} - Google Search</title></head>'
        '<body><div id="rcnt"><div class="bzXtMb M8OgIe"><h1 class="bNg8Rb">Search Results</h1>'
        '<div class="Wm5I1e" id="eKIzJc"><div class="q8sySb"><h1 class="VW3apb">AI Overview</h1>'
        '<div jscontroller="EYwa3d"><div class="Fzsovc" role="heading" aria-level="2"><strong>AI Overview</strong></div>'
        '<div class="h7Tj7e" style="max-height:399px;overflow:hidden"><div class="scm-c"><div class="UxeQfc">'
        f'<div class="LT6XE"><div class="f5cPye" data-rl="en">{paras}{section}</div></div></div></div>'
        f'<ul class="zVKf0d" jsname="Z3saHd">{cards}<li class="tg2Kqf"><div role="button">Show all</div></li></ul>'
        '<div id="sgefoot"></div></div>'
        '<div class="zNsLfb Jzkafd" jsname="rPRdsc" role="button"><span class="clOx1e sjVJQd"><span>Show more</span></span></div>'
        "</div></div></div></div>"
        f'<div id="center_col"><div id="search"><div id="rso">{organic_2026(results, "en")}</div></div></div></div>'
        f"<script>window.jsl.dh('sgefoot',{_js_string(disclaimer, escape_lt=True)});</script>"
        "</body></html>"
    )


def _js_string(text: str, *, escape_lt: bool = False) -> str:
    body = text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
    body = body.replace("</", "<\\/")
    if escape_lt:
        body = body.replace("<", "\\x3c").replace("=", "\\x3d")
    return f"'{body}'"


def _padding(kb: int) -> str:
    """Inline scripts and styles of about `kb` kilobytes, as a real page carries (never run)."""
    if kb <= 0:
        return ""
    rnd = random.Random(kb)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
    chunks = []
    size = 0
    n = 0
    while size < kb * 1024:
        words = "".join(rnd.choice(alphabet) for _ in range(7000))
        if n % 3 == 2:
            chunk = f"<style>.c{n}{{--v:'{words}'}}</style>"
        else:
            chunk = f'<script nonce="x">var _g{n}="{words}";</script>'
        chunks.append(chunk)
        size += len(chunk)
        n += 1
    return "".join(chunks)


def renamed(page: str) -> str:
    """The same page with every class name and `jsname`/`jscontroller` changed, as Google
    changes them every few months: what a parser may not depend on."""
    import re

    def swap(match: re.Match[str]) -> str:
        names = " ".join("z" + name[::-1] for name in match.group(2).split())
        return f'{match.group(1)}="{names}"'

    return re.sub(r'\b(class|jsname|jscontroller)="([^"]*)"', swap, page)


PAGES = {
    "2026-en-overview.html": lambda: page_2026("why is the sky blue"),
    "2026-en-overview-expanded.html": lambda: page_2026("why is the sky blue", expanded=True),
    "2026-ko-overview.html": lambda: page_2026("하늘이 파란 이유", "ko", KO_OVERVIEW, KO_RESULTS),
    "2026-ja-overview.html": lambda: page_2026("空が青い理由", "ja", JA_OVERVIEW, JA_RESULTS),
    "2025-en-sge-overview.html": lambda: page_2025_sge("why is the sky blue"),
    "2026-en-unavailable.html": lambda: page_2026("sky", ov=None, state="unavailable"),
    "2026-en-error.html": lambda: page_2026("sky", ov=None, state="error"),
    "2026-ko-unavailable.html": lambda: page_2026(
        "하늘", "ko", None, KO_RESULTS, state="unavailable"
    ),
    "2026-ja-error.html": lambda: page_2026("空", "ja", None, JA_RESULTS, state="error"),
    "2026-en-loading.html": lambda: page_2026("sky", ov=None, state="loading"),
    "2026-en-no-overview.html": lambda: page_2026("sky", ov=None),
}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in PAGES.items():
        (OUT / name).write_text(build(), encoding="utf-8")
        print(OUT / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
