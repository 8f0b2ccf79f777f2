"""Wikipedia-shaped pages built from question-set articles, for reads that must find the
answer among everything a real page carries: a site header with navigation, a sidebar
with the table of contents and portal links, the title as h1, an infobox, section headings
every few paragraphs, the paragraphs as <p>, references and a footer of links.

Deterministic: the same article gives the same page (headings and infobox values are
chosen from the title's hash), so figures can be compared run to run.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from html import escape

from bench.answers._data import Article

__all__ = ["SECTION_EVERY", "build_page", "page_path"]

# Paragraphs per section (a heading before each group after the lead).
SECTION_EVERY = 3


@dataclass(frozen=True)
class Words:
    """A page's own words in one language."""

    sections: tuple[str, ...]
    site: tuple[str, ...]  # main page, random, about, contact, donate
    tabs: tuple[str, ...]  # article, talk, edit, history
    contents: str
    search: str
    tools: str
    portals: tuple[str, ...]
    tagline: str
    see_also: str
    references: str
    retrieved: str
    footer: tuple[str, ...]  # privacy, terms, ...
    licence: str
    infobox: tuple[str, ...]
    values: tuple[str, ...]


_EN = Words(
    sections=(
        "Overview",
        "History",
        "Description",
        "Background",
        "Development",
        "Reception",
        "Legacy",
        "Details",
        "Later years",
        "Analysis",
    ),
    site=("Main page", "Random article", "About", "Contact us", "Donate"),
    tabs=("Article", "Talk", "Edit", "View history"),
    contents="Contents",
    search="Search",
    tools="Tools",
    portals=("Arts", "Geography", "History", "Science", "Society", "Technology"),
    tagline="From the free encyclopedia",
    see_also="See also",
    references="References",
    retrieved="Retrieved",
    footer=("Privacy policy", "Terms of use", "Disclaimers", "Contact"),
    licence="Text is available under the Creative Commons Attribution-ShareAlike License.",
    infobox=("Type", "Region", "Established", "Known for"),
    values=("See text", "Various", "Unknown", "—"),
)
_WORDS = {
    "en": _EN,
    "ko": Words(
        sections=(
            "개요",
            "역사",
            "설명",
            "배경",
            "전개",
            "평가",
            "영향",
            "세부 사항",
            "이후",
            "분석",
        ),
        site=("대문", "임의의 문서로", "소개", "연락처", "기부"),
        tabs=("문서", "토론", "편집", "역사 보기"),
        contents="목차",
        search="검색",
        tools="도구",
        portals=("예술", "지리", "역사", "과학", "사회", "기술"),
        tagline="위키백과, 우리 모두의 백과사전.",
        see_also="같이 보기",
        references="각주",
        retrieved="확인함",
        footer=("개인정보처리방침", "이용 약관", "면책 조항", "연락처"),
        licence="모든 문서는 크리에이티브 커먼즈 저작자표시-동일조건변경허락 라이선스에 "
        "따라 사용할 수 있습니다.",
        infobox=("종류", "지역", "설립", "주요 내용"),
        values=("본문 참조", "여러 곳", "알 수 없음", "—"),
    ),
    "ja": Words(
        sections=("概要", "歴史", "解説", "背景", "経緯", "評価", "影響", "詳細", "その後", "分析"),
        site=("メインページ", "おまかせ表示", "ウィキペディアについて", "お問い合わせ", "寄付"),
        tabs=("ページ", "ノート", "編集", "履歴表示"),
        contents="目次",
        search="検索",
        tools="ツール",
        portals=("芸術", "地理", "歴史", "科学", "社会", "技術"),
        tagline="出典: フリー百科事典",
        see_also="関連項目",
        references="脚注",
        retrieved="閲覧",
        footer=("プライバシー・ポリシー", "利用規約", "免責事項", "お問い合わせ"),
        licence="テキストはクリエイティブ・コモンズ 表示-継承ライセンスのもとで利用できます。",
        infobox=("種類", "地域", "設立", "特徴"),
        values=("本文参照", "各地", "不明", "—"),
    ),
    "zh": Words(
        sections=("概述", "历史", "说明", "背景", "发展", "评价", "影响", "细节", "后期", "分析"),
        site=("首页", "随机条目", "关于", "联系我们", "资助"),
        tabs=("条目", "讨论", "编辑", "查看历史"),
        contents="目录",
        search="搜索",
        tools="工具",
        portals=("艺术", "地理", "历史", "科学", "社会", "技术"),
        tagline="维基百科，自由的百科全书",
        see_also="参见",
        references="参考文献",
        retrieved="访问于",
        footer=("隐私政策", "使用条款", "免责声明", "联系我们"),
        licence="本站的全部文字在知识共享 署名-相同方式共享 协议之条款下提供。",
        infobox=("类型", "地区", "成立", "特点"),
        values=("见正文", "多地", "不详", "—"),
    ),
}


def page_path(article: Article, index: int) -> str:
    """The page's path on the bench server: language, a running number, a slug."""
    slug = hashlib.sha1(article.title.encode("utf-8")).hexdigest()[:10]
    return f"/wiki/{article.language}/{index:04d}-{slug}.html"


def _seed(article: Article) -> int:
    return int(hashlib.sha1(article.title.encode("utf-8")).hexdigest()[:8], 16)


def _links(names: tuple[str, ...], prefix: str = "/wiki/") -> str:
    return "".join(f'<li><a href="{prefix}{escape(n)}">{escape(n)}</a></li>' for n in names)


def _sections(article: Article, words: Words) -> list[tuple[str, list[str]]]:
    """The lead (no heading), then a heading every `SECTION_EVERY` paragraphs."""
    names, seed = words.sections, _seed(article)
    paragraphs = [p.text for p in article.paragraphs]
    out: list[tuple[str, list[str]]] = [("", paragraphs[:1])]
    for n, i in enumerate(range(1, len(paragraphs), SECTION_EVERY)):
        name = names[(seed + n) % len(names)]
        if n >= len(names):
            name = f"{name} {n // len(names) + 1}"
        out.append((name, paragraphs[i : i + SECTION_EVERY]))
    return out


def _header(w: Words) -> str:
    tabs = " ".join(f'<a href="#">{escape(t)}</a>' for t in w.tabs)
    search = escape(w.search)
    return (
        '<header class="site-header"><a class="logo" href="/">Wikipedia</a>'
        f'<nav class="site-nav" aria-label="site"><ul>{_links(w.site)}</ul></nav>'
        f'<form class="search" action="/search"><input name="q" placeholder="{search}">'
        f'<button>{search}</button></form><nav class="page-tabs">{tabs}</nav></header>'
    )


def _sidebar(w: Words, sections: list[tuple[str, list[str]]]) -> str:
    toc = "".join(
        f'<li><a href="#s{n}">{n}. {escape(name)}</a></li>'
        for n, (name, _) in enumerate(sections)
        if name
    )
    return (
        '<aside class="sidebar" role="navigation">'
        f'<div class="toc"><h2 class="toc-title">{escape(w.contents)}</h2><ol>{toc}</ol></div>'
        f'<div class="portals"><h3>{escape(w.tools)}</h3>'
        f"<ul>{_links(w.portals, '/wiki/Portal:')}</ul></div></aside>"
    )


def _infobox(w: Words, article: Article) -> str:
    seed = _seed(article)
    rows = "".join(
        f"<tr><th>{escape(k)}</th><td>{escape(w.values[(seed + i) % len(w.values)])}</td></tr>"
        for i, k in enumerate(w.infobox)
    )
    return (
        f'<table class="infobox"><caption>{escape(article.title)}</caption><tbody>'
        f'<tr><td colspan="2" class="infobox-image">[image]</td></tr>{rows}</tbody></table>'
    )


def _references(w: Words, article: Article) -> str:
    seed, title = _seed(article), escape(article.title)
    items = "".join(
        f'<li id="cite-{n}"><a href="#ref-{n}">^</a> <cite>{title} ({1990 + (seed + n) % 30}). '
        f'<a class="external" href="https://example.org/source/{n}">Source {n}</a>. '
        f"{escape(w.retrieved)} 2024-0{1 + n % 9}-1{n % 10}.</cite></li>"
        for n in range(1, min(8, 2 + len(article.paragraphs) // 4) + 1)
    )
    return (
        f'<h2 id="see-also">{escape(w.see_also)}</h2>'
        f'<ul class="see-also">{_links(w.portals[:3])}</ul>'
        f'<h2 id="references">{escape(w.references)}</h2><ol class="references">{items}</ol>'
    )


def _footer(w: Words) -> str:
    return (
        f'<footer class="site-footer"><p>{escape(w.licence)}</p>'
        f"<ul>{_links(w.footer)}</ul></footer>"
    )


def build_page(article: Article) -> str:
    """The article as a Wikipedia-shaped HTML page (language on <html>)."""
    w = _WORDS.get(article.language, _EN)
    sections = _sections(article, w)
    body = [_infobox(w, article)]
    for n, (name, paragraphs) in enumerate(sections):
        if name:
            body.append(f'<h2 id="s{n}"><span class="mw-headline">{escape(name)}</span></h2>')
        body.extend(f"<p>{escape(text)}</p>" for text in paragraphs)
    title = escape(article.title)
    return (
        f'<!DOCTYPE html>\n<html lang="{escape(article.language)}"><head><meta charset="utf-8">'
        f"<title>{title} - Wikipedia</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<style>body{font-family:sans-serif;margin:0}.sidebar{float:left;width:12em}"
        "main{margin-left:13em;max-width:60em}.infobox{float:right;border:1px solid #aaa;"
        "margin:0 0 1em 1em}</style></head><body>"
        f"{_header(w)}{_sidebar(w, sections)}"
        f'<main id="content"><h1 id="firstHeading">{title}</h1>'
        f'<div class="subtitle">{escape(w.tagline)}</div>'
        f'<div id="bodyContent" class="mw-parser-output">{"".join(body)}'
        f"{_references(w, article)}</div></main>{_footer(w)}</body></html>\n"
    )
