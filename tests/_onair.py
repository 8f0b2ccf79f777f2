"""Stand-ins of pages that draw over their own text (for the screen tests and `make screens`).

One long article about a harbour timetable, and what news and magazine sites put over it: a
fixed 170 px site header (a sticky one, and a white one laid over the article's opening), a
newsletter modal 0.8 s after load, a consent dialog no consent rule knows (in English, Korean,
Japanese and German), a full-page advertisement interstitial that locks scrolling, an "open
in the app" sheet over the lower half of the viewport, a modal `<dialog>` and a sign-in modal
in a framework's portal; and a web app's shell (the article inside one fixed layer), which is
the page itself and must stay.
Written to the shape of such pages (fixed layers, dimmers, `overflow: hidden` on html/body),
with class names no consent rule matches. `route_all(server)` serves them as `/onair/NAME`.
"""

from __future__ import annotations

from typing import Any

QUESTION = "When does the first ferry leave the harbour in winter?"
TITLE = "Harbour timetable changes for the winter season"
LEAD = (
    "The harbour authority has published the winter timetable for the island ferries, "
    "which takes effect on the first Monday of November and runs until the end of March."
)
ANSWER = (
    "In winter the first ferry leaves the harbour at 6:40 in the morning, twenty minutes "
    "later than in summer, and the last one returns from the islands at 21:15."
)
FILLER = [
    "The changes follow a consultation with residents of the three islands, who asked for "
    "earlier connections on weekdays and fewer crossings late in the evening.",
    "Freight crossings keep their own schedule and are announced a week in advance on the "
    "notice board at the ticket office and on the authority's website.",
    "Season tickets bought before November stay valid; holders of a summer pass can exchange "
    "it at the ticket office for a winter pass at no extra cost.",
    ANSWER,
    "On Sundays the service starts an hour later, and the crossing to the northern island "
    "runs only twice a day because of the tides in the narrow channel.",
    "The harbour master reminded passengers that boarding closes ten minutes before each "
    "departure, and that bicycles must be booked in advance in the winter months.",
    "Storm warnings can cancel crossings at short notice; cancellations are posted at the "
    "quay, and passengers with a ticket are offered the next available crossing.",
    "The old stone pier will be repaired in January, so departures for the southern island "
    "move to the new pontoon for four weeks.",
]
PARAGRAPHS = [LEAD, *FILLER, *(f"{p} (Update {i}.)" for i, p in enumerate(FILLER * 3, 1))]

_STYLE = """
body { margin: 0; font: 19px/1.55 Georgia, serif; color: #222; background: #fff }
main { max-width: 760px; margin: 0 auto; padding: 24px }
.teaser { height: HEROpx; background: linear-gradient(#d8e4ee, #b9cbd9); margin: 0 0 24px;
  display: flex; align-items: flex-end; padding: 16px; box-sizing: border-box; color: #345 }
h1 { font-size: 34px; line-height: 1.2; margin: 0 0 16px }
"""
_PAGE = """<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8">
<title>{title}</title><style>{style}{extra_style}</style></head><body>{before}
<main><div class="teaser">Photo: the ferry at the old stone pier</div>
<article><h1>{title}</h1>{paragraphs}</article></main>{after}</body></html>"""

HEADER_STYLE = """
.site-top { position: fixed; top: 0; left: 0; right: 0; height: 170px; z-index: 50;
  background: #0d2b45; color: #fff; font: 600 30px/1 sans-serif; padding: 28px 32px;
  box-sizing: border-box }
.site-top nav { font: 16px sans-serif; margin-top: 40px; word-spacing: 18px }
body { padding-top: 170px }
"""
HEADER = """<header class="site-top">The Harbour Gazette
<nav>News Islands Weather Timetables Opinion Sport</nav></header>"""

STICKY_STYLE = HEADER_STYLE.replace("position: fixed", "position: sticky").replace(
    "body { padding-top: 170px }", ""
)
# A masthead that scrolls away and, under it, a sticky navigation bar: not yet stuck where the
# page opens, it pins itself to the top once the reader scrolls past the masthead.
MASTHEAD_STYLE = """
.masthead { height: 120px; background: #e9eef2; font: 600 40px/120px Georgia, serif;
  padding: 0 32px }
.site-top { position: sticky; top: 0; height: 170px; z-index: 50; background: #0d2b45;
  color: #fff; font: 600 30px/1 sans-serif; padding: 28px 32px; box-sizing: border-box }
.site-top nav { font: 16px sans-serif; margin-top: 40px; word-spacing: 18px }
.ticker { position: fixed; left: 0; right: 0; bottom: 0; height: 100px; z-index: 40;
  background: #f3e9c6; font: 18px/100px sans-serif; padding: 0 32px }
"""
MASTHEAD = (
    '<div class="masthead">The Harbour Gazette</div>'
    + HEADER
    + '<div class="ticker">Live: departures on time at every pier</div>'
)
# A floating sticky header: it stops 12 px short of the top, so the top row of the viewport
# is the page's own content, not the bar.
FLOAT_STYLE = STICKY_STYLE.replace(
    ".site-top { position: sticky; top: 0;",
    ".site-top { position: sticky; top: 12px; margin: 12px 16px 0; border-radius: 14px;",
)
# A plain white fixed header laid over the top of the article with no room of its own above
# it (no padding on the body): the opening starts under it, where no scroll can bring it lower.
OVER_HEADER = (
    '<header class="site-top" style="position:fixed;top:0;left:0;right:0;height:170px;'
    'background:#fff;z-index:50">The Harbour Gazette</header>'
)
# A web app's shell: the whole article inside one fixed layer that scrolls on its own.
SHELL_STYLE = """
.shell { position: fixed; inset: 0; overflow: auto; background: #fbfbf8 }
"""

LAYER_STYLE = """
.layer-dim { position: fixed; inset: 0; background: rgba(0, 0, 0, 0.62); z-index: 900 }
.layer-box { position: fixed; left: 50%; top: 50%; transform: translate(-50%, -50%);
  width: 520px; max-width: 90vw; background: #fff; border-radius: 10px; z-index: 901;
  padding: 28px; box-sizing: border-box; font: 17px/1.45 sans-serif;
  box-shadow: 0 10px 40px rgba(0, 0, 0, 0.4) }
.layer-box h2 { margin: 0 0 12px; font-size: 24px }
.layer-box button { font: 600 16px sans-serif; padding: 10px 16px; margin: 12px 8px 0 0;
  border: 1px solid #333; border-radius: 6px; background: #fff; cursor: pointer }
.layer-box button.main { background: #0d2b45; color: #fff }
html.layer-open, html.layer-open body { overflow: hidden }
"""
NEWSLETTER = """<script>setTimeout(() => {
  const dim = document.createElement('div'); dim.className = 'layer-dim';
  const box = document.createElement('div'); box.className = 'layer-box';
  box.setAttribute('role', 'dialog');
  box.innerHTML = '<h2>Get the morning briefing</h2><p>The day\\'s harbour news in your inbox '
    + 'before the first ferry leaves.</p><input placeholder="Your e-mail" size="28">'
    + '<button class="main">Subscribe</button><button>No thanks</button>';
  document.body.append(dim, box);
  document.documentElement.classList.add('layer-open');
}, 800);</script>"""

# A consent dialog no rule knows, as a site's own code might draw it: in four languages.
CONSENT_TEXT = {
    "en": (
        "We value your privacy",
        "We and our partners use cookies and similar technologies to store and access "
        "information on your device, to measure the audience and to show personalised "
        "advertising. You can accept, reject or manage your choices at any time.",
        ("Accept all", "Reject all", "Manage options"),
    ),
    "ko": (
        "개인정보 보호를 소중히 생각합니다",
        "당사와 파트너는 쿠키 및 유사한 기술을 사용하여 기기에 정보를 저장하고 액세스하며, "
        "방문자 수를 측정하고 맞춤형 광고를 표시합니다. 언제든지 동의, 거부 또는 설정을 변경할 수 "
        "있습니다.",
        ("모두 동의", "모두 거부", "설정 관리"),
    ),
    "ja": (
        "お客様のプライバシーを大切にしています",
        "当社およびパートナーは、Cookie および類似の技術を使用して、お使いのデバイスに情報を"
        "保存・アクセスし、閲覧数の測定やパーソナライズされた広告の表示を行います。"
        "いつでも同意、拒否、または設定の管理ができます。",
        ("すべて同意する", "すべて拒否する", "設定を管理"),
    ),
    "de": (
        "Wir respektieren Ihre Privatsphäre",
        "Wir und unsere Partner verwenden Cookies und ähnliche Technologien, um Informationen "
        "auf Ihrem Gerät zu speichern und abzurufen, die Reichweite zu messen und "
        "personalisierte Werbung anzuzeigen. Sie können jederzeit zustimmen, ablehnen oder "
        "Ihre Auswahl verwalten.",
        ("Alle akzeptieren", "Alle ablehnen", "Einstellungen verwalten"),
    ),
}
CONSENT = """<div class="layer-dim"></div><div class="layer-box" id="pv-box">
<h2>{head}</h2><p>{text}</p><button class="main" data-choice="accept">{accept}</button>
<button data-choice="reject">{reject}</button><button data-choice="manage">{manage}</button>
</div><script>document.documentElement.classList.add('layer-open');
for (const b of document.querySelectorAll('#pv-box button')) b.addEventListener('click', () => {{
  window.pvChoice = b.dataset.choice; document.querySelector('.layer-dim').remove();
  document.getElementById('pv-box').remove();
  document.documentElement.classList.remove('layer-open'); }});</script>"""

# The same newsletter as a modal `<dialog>` (the top layer, its own ::backdrop), and as a
# framework's portal: fixed layers three levels down in the app's root, beside the article.
DIALOG_STYLE = """
dialog.signup { width: 520px; border: 0; border-radius: 10px; padding: 28px;
  font: 17px/1.45 sans-serif }
dialog.signup::backdrop { background: rgba(0, 0, 0, 0.62) }
"""
DIALOG = """<dialog class="signup"><h2>Get the morning briefing</h2>
<p>The day's harbour news in your inbox before the first ferry leaves.</p>
<button>Subscribe</button> <button>No thanks</button></dialog>
<script>document.querySelector('dialog.signup').showModal();
document.documentElement.classList.add('layer-open');</script>"""
PORTAL = """<div class="portal"><div class="portal-inner"><div class="layer-dim"></div>
<div class="layer-box" role="dialog" aria-modal="true"><h2>Before you go on</h2>
<p>Sign in to keep reading the Harbour Gazette.</p><button class="main">Sign in</button>
</div></div></div><script>document.documentElement.classList.add('layer-open');</script>"""

INTERSTITIAL_STYLE = """
.ad-gate { position: fixed; inset: 0; z-index: 2000; background: #f1f1f1;
  display: flex; flex-direction: column; align-items: center; justify-content: center;
  font: 15px sans-serif; color: #555 }
.ad-gate .slot { width: 640px; max-width: 90vw; height: 360px; background: #c9c9c9;
  margin: 12px 0 18px; display: flex; align-items: center; justify-content: center;
  font: 700 40px sans-serif; color: #888 }
.ad-gate a { font: 600 18px sans-serif; color: #0d2b45 }
html.gate-open, html.gate-open body { overflow: hidden; height: 100% }
"""
INTERSTITIAL = """<div class="ad-gate"><div>ADVERTISEMENT</div><div class="slot">AD 640x360</div>
<a href="#" onclick="this.parentNode.remove(); return false">Continue to site &rsaquo;</a></div>
<script>document.documentElement.classList.add('gate-open');</script>"""

SHEET_STYLE = """
.app-sheet { position: fixed; left: 0; right: 0; bottom: 0; height: 50vh; z-index: 700;
  background: #fff; border-radius: 18px 18px 0 0; box-shadow: 0 -6px 30px rgba(0,0,0,.35);
  font: 18px sans-serif; padding: 28px 36px; box-sizing: border-box }
.app-sheet b { display: block; font-size: 26px; margin-bottom: 10px }
.app-sheet span { display: inline-block; margin: 18px 16px 0 0; padding: 12px 22px;
  border-radius: 24px; background: #0d2b45; color: #fff }
"""
SHEET = """<div class="app-sheet"><b>Open in the Harbour Gazette app</b>
Timetables, live departures and alerts for every crossing.
<span>Open the app</span><span>Continue in the browser</span></div>"""


def page(
    *,
    hero: int = 280,
    lang: str = "en",
    style: str = "",
    before: str = "",
    after: str = "",
) -> str:
    """The article with `before`/`after` around its main column and `style` added."""
    return _PAGE.format(
        lang=lang,
        title=TITLE,
        style=_STYLE.replace("HERO", str(hero)),
        extra_style=style,
        before=before,
        paragraphs="".join(f"<p>{p}</p>" for p in PARAGRAPHS),
        after=after,
    )


def consent_page(lang: str) -> str:
    head, text, (accept, reject, manage) = CONSENT_TEXT[lang]
    layer = CONSENT.format(head=head, text=text, accept=accept, reject=reject, manage=manage)
    return page(lang=lang, style=LAYER_STYLE, after=layer)


# name -> the page. The header's teaser is tall, so the passage must be scrolled to; the
# sheet's teaser is short, so the passage sits in the lower half with no scroll at all.
PAGES: dict[str, str] = {
    "plain": page(),
    "header": page(hero=900, style=HEADER_STYLE, before=HEADER),
    "newsletter": page(style=LAYER_STYLE, after=NEWSLETTER),
    "consent": consent_page("en"),
    "interstitial": page(style=INTERSTITIAL_STYLE, after=INTERSTITIAL),
    "sheet": page(hero=40, style=SHEET_STYLE, after=SHEET),
    "sticky": page(hero=900, style=STICKY_STYLE, before=HEADER),
    "sticky-later": page(hero=900, style=MASTHEAD_STYLE, before=MASTHEAD),
    "sticky-float": page(hero=900, style=FLOAT_STYLE, before=HEADER),
    "header-over": page(hero=40, before=OVER_HEADER),
    "dialog": page(style=LAYER_STYLE + DIALOG_STYLE, after=DIALOG),
    "portal": page(style=LAYER_STYLE, before='<div id="app">', after=PORTAL + "</div>"),
    "shell": page(style=SHELL_STYLE, before='<div class="shell">', after="</div>"),
    **{f"consent-{lang}": consent_page(lang) for lang in CONSENT_TEXT},
}


def route_all(server: Any, prefix: str = "/onair/") -> dict[str, str]:
    """Serve every page on `server` (a tests._server.LocalServer); name -> its URL."""
    from tests._server import Reply

    return {name: server.route(prefix + name, Reply(html)) for name, html in PAGES.items()}
