"""Nothing the page draws covers the passage the assistant talks about.

Failure modes it guards against (measured on Chromium 156, headful on Xvfb): a fixed site
header over the passage the stage scrolled to; a newsletter modal, a consent dialog no rule
knows, an advertisement interstitial or an "open in the app" sheet over the article until the
next call, with the page's scrolling locked by `overflow: hidden` on html/body.

- Room: where the stage scrolls, it measures what the page pins along the viewport's top and
  bottom edges (fixed and sticky bars, found by `elementFromPoint` probes across the
  passage's columns) and puts the passage's first lines in the band between them
  (`SCROLL_JS`, used by `_focus`).
- Covers: anything else fixed, sticky or positioned the page draws on top (over the
  passage's lines, over 40% of the viewport, a dialog, or above such a dimmer) is hidden by a
  rule of ours (`visibility: hidden`) in a DevTools inspector stylesheet, which no script of
  the page sees; an element holding the passage is never hidden, nothing is removed from the
  DOM and nothing is clicked (consent banners are autoconsent's, answered by its rules first:
  a banner it is answering is transparent and left alone). The scroll lock (`overflow` on
  html/body, a fixed body) is lifted by the same sheet once a cover was hidden.
- Late covers: after the answer, a MutationObserver in our isolated world (and a re-check
  every few hundred ms) finds what the page adds for `WATCH_S` more, in the background,
  without holding the tab; a new document ends it.
"""

from __future__ import annotations

import time
from typing import Any

import structlog

log = structlog.get_logger("browser_core.stage")

__all__ = ["SCROLL_JS", "WATCH_S", "Covers"]

WATCH_S = 3.0  # how long after the answer the page is watched for late covers
_TICK_MS = 150  # the watch's re-check after the page changed
_QUIET_MS = 450  # and its re-check while nothing changed (CSS-only reveals, timers)

# What the page pins along the viewport's edges, and the scroll that leaves room for it.
SCROLL_JS = r"""
const sbPinnedOf = (el) => {
  for (let e = el; e && e.nodeType === 1 && e !== document.body
       && e !== document.documentElement; e = e.parentElement) {
    const p = getComputedStyle(e).position;
    if (p === 'fixed' || p === 'sticky') return e;
  }
  return null;
};
const sbIsBar = (b) => b.width >= 0.5 * innerWidth && b.height <= 0.3 * innerHeight;
// A pinned bar that stays where it is as the page scrolls: fixed, or sticky and stuck at its
// own offset from that edge (a floating header 12 px below the top, not only one at 0).
const sbStuck = (e, b, atTop) => {
  const cs = getComputedStyle(e);
  if (cs.position === 'fixed') return true;
  const offset = parseFloat(atTop ? cs.top : cs.bottom);
  return !isNaN(offset) && Math.abs((atTop ? b.top : innerHeight - b.bottom) - offset) < 2;
};
// Down from the top (up from the bottom) in steps: a bar on the edge, the bars stacked on it,
// and a stuck bar with the page's own content between it and the edge.
const sbEdge = (x, atTop) => {
  const ih = innerHeight;
  let inset = 0;
  for (let d = 1, n = 0; n < 12 && d < 0.4 * ih; n++) {
    const y = atTop ? d : ih - d, e = sbPinnedOf(document.elementFromPoint(x, y));
    const b = e && e.getBoundingClientRect();
    const bar = b && sbIsBar(b) && (atTop ? b.top <= y : b.bottom >= y)
      && getComputedStyle(e).visibility !== 'hidden'
      && (d === 1 || d === inset + 1 || sbStuck(e, b, atTop));
    if (bar) {
      inset = Math.max(inset, atTop ? b.bottom : ih - b.top); d = inset + 1;
    } else d += 24;
  }
  return inset;
};
const sbInsets = (range) => {
  const ih = innerHeight, iw = innerWidth, r = range ? range.getBoundingClientRect() : null;
  const left = r && r.width > 0 ? Math.max(0, r.left) : 0;
  const right = r && r.width > 0 ? Math.min(iw, r.right) : iw;
  let top = 0, bottom = 0;
  for (const f of [0.1, 0.5, 0.9]) {
    const x = left + f * (right - left);
    top = Math.max(top, sbEdge(x, true));
    bottom = Math.max(bottom, sbEdge(x, false));
  }
  return {top: Math.min(top, 0.4 * ih), bottom: Math.min(bottom, 0.4 * ih)};
};
// What scrolls the passage: the window, or the box of its own a web app scrolls it in.
const sbScroller = (range) => {
  const node = range.startContainer;
  for (let e = node.nodeType === 1 ? node : node.parentElement; e && e !== document.body
       && e !== document.documentElement; e = e.parentElement) {
    if (/auto|scroll|overlay/.test(getComputedStyle(e).overflowY)
        && e.scrollHeight > e.clientHeight + 1) return e;
  }
  return window;
};
// Jump near the target at once (so it is in view when the answer returns), then glide the
// last stretch smoothly: a smooth scroll across a long article takes about 1.5 s in Chromium.
const sbScrollTo = (range) => {
  const ih = innerHeight, r = range.getBoundingClientRect(), room = sbInsets(range);
  const free = ih - room.top - room.bottom;
  if (r.top >= room.top + 0.08 * free && r.bottom <= room.top + 0.9 * free) return false;
  const box = sbScroller(range), at = () => (box === window ? scrollY : box.scrollTop);
  const from = at();
  // Land on the target first and measure the bars again there: a sticky header that was not
  // yet stuck where the page stood (under a masthead, below the fold) pins itself there.
  box.scrollTo({top: from + r.top - room.top - 0.25 * free, behavior: 'instant'});
  const landed = at(), r2 = range.getBoundingClientRect(), room2 = sbInsets(range);
  const to = landed + r2.top - room2.top - 0.25 * (ih - room2.top - room2.bottom);
  const glide = Math.min(Math.abs(to - from), 0.2 * ih) * Math.sign(to - from);
  box.scrollTo({top: to - glide, behavior: 'instant'});
  box.scrollTo({top: to, behavior: 'smooth'});
  return true;
};
"""

_CHECK_JS = (
    SCROLL_JS
    + r"""
const sbState = () => globalThis.__sbCovers || (globalThis.__sbCovers =
  {hidden: [], css: '', unlock: false, room: 0, rescrolls: 0});
const sbSelector = (el) => {
  const html = document.documentElement, parts = [];
  let e = el;
  for (; e && e !== html; e = e.parentElement) {
    if (e.id && document.querySelectorAll('#' + CSS.escape(e.id)).length === 1) {
      parts.unshift('#' + CSS.escape(e.id)); break;
    }
    const parent = e.parentElement;
    if (!parent) return null;
    const classes = [...e.classList].slice(0, 3).map((c) => '.' + CSS.escape(c)).join('');
    const nth = Array.prototype.indexOf.call(parent.children, e) + 1;
    parts.unshift(CSS.escape(e.localName) + classes + ':nth-child(' + nth + ')');
  }
  if (e === html) parts.unshift(':root');
  const selector = parts.join(' > ');
  try { return document.querySelector(selector) === el ? selector : null; }
  catch (err) { return null; }
};
const sbShown = (e, b) => {
  if (b.width < 2 || b.height < 2 || b.bottom <= 0 || b.right <= 0
      || b.top >= innerHeight || b.left >= innerWidth) return false;
  if (getComputedStyle(e).visibility === 'hidden') return false;
  let opacity = 1;
  for (let a = e; a && a.nodeType === 1; a = a.parentElement) {
    const cs = getComputedStyle(a);
    if (cs.display === 'none') return false;
    opacity *= parseFloat(cs.opacity);
    if (opacity < 0.05) return false;  // autoconsent's prehide: a banner it is answering
  }
  return true;
};
const sbOnTop = (e, b) => {  // some of its box is what a viewer sees there
  const cs = getComputedStyle(e);
  if (cs.pointerEvents === 'none') return (parseInt(cs.zIndex, 10) || 0) > 0;
  const l = Math.max(0, b.left), r = Math.min(innerWidth, b.right);
  const t = Math.max(0, b.top), d = Math.min(innerHeight, b.bottom);
  for (const [fx, fy] of [[0.5, 0.5], [0.2, 0.2], [0.8, 0.2], [0.2, 0.8], [0.8, 0.8]]) {
    const hit = document.elementFromPoint(l + fx * (r - l), t + fy * (d - t));
    if (hit && e.contains(hit)) return true;
  }
  return false;
};
const sbOverlap = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left))
  * Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
const sbCandidates = (range, lines) => {
  const html = document.documentElement, body = document.body, out = new Set();
  const positioned = (e) => /^(fixed|sticky|absolute)$/.test(getComputedStyle(e).position);
  const holds = (e) => range && (e.contains(range.startContainer) || range.intersectsNode(e));
  let n = 0;
  for (const c of [...html.children, ...body.children]) {
    if (c === body || c.localName === 'head' || ++n > 800) continue;
    if (positioned(c) && !holds(c)) out.add(c);
    for (const g of c.children) {
      if (++n > 800) break;
      const p = getComputedStyle(g).position;
      if ((p === 'fixed' || p === 'sticky') && !holds(g)) out.add(g);
    }
  }
  try {
    for (const d of document.querySelectorAll('dialog[open], :popover-open')) {
      if (!holds(d)) out.add(d);
    }
  } catch (err) { /* no :popover-open */ }
  // What a viewer sees where the passage's lines are: of the boxes there that do not hold
  // it, the outermost fixed or sticky one (else the outermost absolute one).
  for (const line of lines.slice(0, 6)) {
    for (const fx of [0.25, 0.5, 0.75]) {
      const hit = document.elementFromPoint(line.left + fx * (line.right - line.left),
                                            (line.top + line.bottom) / 2);
      let pinned = null, placed = null;
      for (let e = hit; e && e !== body && e !== html && !holds(e); e = e.parentElement) {
        const p = getComputedStyle(e).position;
        if (p === 'fixed' || p === 'sticky') pinned = e;
        else if (p === 'absolute') placed = e;
      }
      if (pinned || placed) out.add(pinned || placed);
    }
  }
  return out;
};
const sbClassify = (range, lines) => {
  const vw = innerWidth, vh = innerHeight, view = {left: 0, top: 0, right: vw, bottom: vh};
  const found = [];
  for (const e of sbCandidates(range, lines)) {
    const b = e.getBoundingClientRect();
    if (!sbShown(e, b) || !sbOnTop(e, b)) continue;
    const cs = getComputedStyle(e), pinned = /^(fixed|sticky)$/.test(cs.position);
    const edge = b.top <= 2 || b.bottom >= vh - 2;
    const over = lines.some((l) => sbOverlap(l, b) > 0);
    const share = sbOverlap(view, b) / (vw * vh);
    const dialog = e.matches('dialog, [role=dialog], [role=alertdialog], [aria-modal=true]')
      || !!e.querySelector('[role=dialog], [role=alertdialog], [aria-modal=true]');
    found.push({e, b, z: parseInt(cs.zIndex, 10) || 0,
      bar: pinned && edge && sbIsBar(b) && !dialog, over, share, dialog});
  }
  const dims = found.filter((f) => !f.bar && f.share >= 0.4);
  const dimZ = dims.length ? Math.min(...dims.map((f) => f.z)) : null;
  return found.filter((f) => !f.bar
    && (f.over || f.share >= 0.4 || f.dialog || (dimZ !== null && f.z >= dimZ)));
};
const sbLocked = () => {
  const html = document.documentElement, body = document.body;
  const clips = (e) => /hidden|clip/.test(getComputedStyle(e).overflowY);
  const fixed = getComputedStyle(body).position === 'fixed';
  const tall = Math.max(html.scrollHeight, body.scrollHeight) > innerHeight + 4;
  return {lock: tall && (clips(html) || clips(body) || fixed), fixed};
};
// The first line under a bar the page pins at the top while the page stands at the top of
// its scroll (a fixed header laid over the article's opening, with no room of its own above
// it): no scroll brings the line lower, so the page gets that room at its top (a padding on
// the root, in our sheet) and the line lands where the scroll puts a passage (`sbScrollTo`).
const sbRoom = (S, range, lines) => {
  if (S.room || !range || !lines.length || scrollY > 1 || sbScroller(range) !== window) return;
  const first = lines[0], room = sbInsets(range);
  if (!room.top || first.top >= room.top) return;
  const free = innerHeight - room.top - room.bottom;
  const pad = parseFloat(getComputedStyle(document.documentElement).paddingTop) || 0;
  S.room = Math.ceil(pad + room.top + 0.25 * free - first.top);
};
const sbRules = (S) => {
  const rules = [];
  if (S.room) rules.push(':root { padding-top: ' + S.room + 'px !important }');
  S.hidden = S.hidden.filter((e) => e.isConnected);
  for (const e of S.hidden) {
    const s = sbSelector(e);
    if (!s) continue;
    rules.push(s + ', ' + s + ' * { visibility: hidden !important; pointer-events: none'
      + ' !important; transition: none !important }',
      s + '::backdrop { display: none !important }');
  }
  if (S.unlock) {
    rules.push('html, body { overflow: visible !important; overscroll-behavior: auto !important }');
    if (S.fixed) rules.push('body { position: static !important; top: auto !important }');
  }
  return rules.join('\n');
};
const sbCheck = (name) => {
  const S = sbState(), body = document.body, t0 = performance.now();
  if (!body) return {changed: false};
  const mark = name && CSS.highlights.get(name);
  const range = mark && mark.size ? [...mark][0] : null;
  const lines = range ? [...range.getClientRects()].filter((l) => l.width > 1 && l.bottom > 0
    && l.top < innerHeight).slice(0, 20) : [];
  const covers = sbClassify(range, lines).filter((f) => !S.hidden.includes(f.e));
  for (const f of covers) S.hidden.push(f.e);
  const locked = sbLocked();
  if (locked.lock && S.hidden.length && !S.unlock) { S.unlock = true; S.fixed = locked.fixed; }
  sbRoom(S, range, lines);
  const css = sbRules(S);
  const changed = css !== S.css;
  S.css = css;
  let rescrolled = false;
  if (!changed && range && S.rescrolls < 3) {
    // The first line under a bar that appeared (a header made sticky by the scroll) or out
    // of view after the lock was lifted: scrolled to again, with room.
    const first = lines[0], room = sbInsets(range);
    const out = !first || first.top < room.top || first.bottom > innerHeight - room.bottom;
    if (out && (room.top || room.bottom || S.unlock)) {
      rescrolled = sbScrollTo(range); S.rescrolls += rescrolled ? 1 : 0;
    }
  }
  return {changed, css, hidden: S.hidden.length, added: covers.length, unlock: S.unlock,
          room: S.room || 0, rescrolled, ms: Math.round((performance.now() - t0) * 10) / 10,
          what: covers.slice(0, 4).map((f) => f.e.localName
            + (f.e.className && typeof f.e.className === 'string'
               ? '.' + f.e.className.split(/\s+/)[0] : ''))};
};
"""
)

CHECK_JS = "(arg) => {\n" + _CHECK_JS + "\nreturn sbCheck(arg.name);\n}"

# Resolves with the first change found (or nothing changed within `ms`): the page's own
# mutations, and a re-check now and then for what CSS alone reveals.
WATCH_JS = (
    "(arg) => {\n"
    + _CHECK_JS
    + r"""
return new Promise((done) => {
  let dirty = true, last = 0, over = false;
  const end = performance.now() + arg.ms;
  const seen = new MutationObserver(() => { dirty = true; });
  seen.observe(document.documentElement, {childList: true, subtree: true, attributes: true,
    attributeFilter: ['class', 'style', 'open', 'hidden']});
  const finish = (value) => { over = true; seen.disconnect(); done(value); };
  const tick = () => {
    if (over) return;
    const now = performance.now();
    if (dirty || now - last >= arg.quiet) {
      dirty = false; last = now;
      const found = sbCheck(arg.name);
      if (found.changed) return finish(found);
    }
    if (now >= end) return finish({changed: false});
    setTimeout(tick, Math.min(arg.tick, Math.max(0, end - now)));
  };
  tick();
});
}"""
)


class Covers:
    """Covers of one document, over a world of ours (`_focus.World`, opened for it or borrowed
    from the marks' prepared world): its own inspector stylesheet."""

    def __init__(self, world: Any, name: str, *, owns_world: bool) -> None:
        self.world = world
        self.name = name
        self.owns_world = owns_world
        self._sheet: str | None = None
        self.hidden = 0

    async def check(self) -> Any:
        """Hide what covers the page now (before the passage is marked: the dimmers, dialogs
        and sheets; after it: also what lies over its lines); the check's findings."""
        found = await self.world.call(CHECK_JS, {"name": self.name})
        if found:
            log.debug("stage.covers_checked", ms=found.get("ms"), hidden=found.get("hidden"))
        await self._apply(found, late=False)
        return found

    async def watch(self, seconds: float = WATCH_S) -> None:
        """Keep checking for `seconds` as the page changes (a modal 0.8 s after load); ends
        early when the document goes. Closes the CSS agent it used."""
        until = time.monotonic() + seconds
        try:
            while (left := until - time.monotonic()) > 0.05:
                arg = {"name": self.name, "ms": int(left * 1000)}
                found = await self.world.call(
                    WATCH_JS, {**arg, "tick": _TICK_MS, "quiet": _QUIET_MS}
                )
                if not found or not found.get("changed"):
                    return
                await self._apply(found, late=True)
        finally:
            await self.close()

    async def _apply(self, found: Any, *, late: bool) -> None:
        if not found or not found.get("changed"):
            return
        send = self.world.session.send
        if self._sheet is None:
            await send("DOM.enable")
            await send("CSS.enable")
            # `force`: a sheet of its own; without it the agent hands back the sheet of the
            # marks' colours on this document, and our rules would replace them.
            sheet = await send(
                "CSS.createStyleSheet", {"frameId": self.world.frame_id, "force": True}
            )
            self._sheet = sheet["styleSheetId"]
        await send("CSS.setStyleSheetText", {"styleSheetId": self._sheet, "text": found["css"]})
        self.hidden = int(found.get("hidden", 0))
        log.info(
            "stage.covers_hidden",
            hidden=self.hidden,
            added=found.get("added"),
            what=found.get("what"),
            unlocked=bool(found.get("unlock")),
            room_px=found.get("room"),
            late=late,
        )

    async def close(self) -> None:
        """Disable the CSS agent (our rules stay); detach from the page if the world is ours."""
        try:
            if self._sheet is not None:
                self._sheet = None
                await self.world.session.send("CSS.disable")
                await self.world.session.send("DOM.disable")
        except Exception:  # the document or the page is gone: nothing left to disable
            pass
        if self.owns_world:
            await self.world.close()
