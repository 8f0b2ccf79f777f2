"""A clean screen: what a page may not put on the broadcast by itself, set up per page.

The driver calls `prepare_page(page, settings)` every time it takes the owned tab into a
connection (a fresh tab, an adopted one, after a restart of Chrome or of the service), and
`after_op(page, op)` when an operation ends. Both are bounded in time and never raise.

Per page (what a launch switch or profile preference cannot do; those live in `chrome`):
- JS dialogs: `alert`/`confirm`/`prompt` are no-ops in every frame of every document (an
  init script in the page's world, where the page calls them), so a timer firing after the
  call returns, when no driver is attached to answer, draws nothing; while a driver is
  attached its dialog handler answers whatever slips past (a frame the script missed).
- External protocols (`mailto:`, `tel:`, an app's scheme), so Chrome does not ask "Open
  xdg-open?" (nor hand the address to another program). Chrome-wide, a Chrome we start has an
  `xdg-settings` shim first on its PATH (`chrome._profile.pin_protocol_shim`). Per page: every
  document gets a CSP `frame-src` of web schemes (`FRAME_CSP`, from a `<meta>` the init script
  inserts and removes before the parser starts: the policy stays), so Chrome refuses such a
  frame however it is made (in the HTML, by `innerHTML`, by a script); `src`/`setAttribute`
  with such an address are dropped too; every navigation of the page itself to such an address
  is cancelled in the Navigation API's `navigate` event (`location=`, `location.assign`, a
  form, a meta refresh, also while the page holds a user gesture from a click); `window.open`
  of one returns null; clicks on such links do nothing. A page that sets `location` to such a
  scheme while it loads no longer stops its own parsing (which left `goto` waiting out its
  timeout for a DOMContentLoaded that never came). Measured and not used: a CSP header added
  over CDP `Fetch.continueResponse` is ignored by Chrome 156 (and loops with Playwright's own
  routes); re-pointing or removing the frame from a MutationObserver does not stop the prompt.
- `print()`: a no-op in every frame (the profile's `printing.enabled` closes it Chrome-wide).
- Downloads: `Browser.setDownloadBehavior` deny (no file, no bubble; Playwright still sees
  the attempt, so a read of an attachment says "download").
- Sound: only the player's site may make sound, and only during and after a play. Media
  elements (in the page or detached `new Audio()`) are paused and Web Audio contexts
  suspended at once while the page is quiet; `after_op` makes the page quiet when any other
  operation ends. (Chrome has no CDP mute of a tab, and `--mute-audio` would mute the video.)

Extension points for the other stage modules (consent, fonts, focus, caption): append an
async `(page, settings) -> None` to `INSTALLERS` with `add_installer` (each runs once per
page, in order, within `INSTALL_BUDGET_S`), or an init script to `INIT_SCRIPTS` with
`add_init_script`. Failures are logged and skipped: the stage never fails a call.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from .._settings import Settings
from ._perpage import PerPage

log = structlog.get_logger("browser_core.stage.screen")

Installer = Callable[[Page, Settings], Awaitable[None]]
INSTALL_BUDGET_S = 1.5  # for all installers of one page together
QUIET_BUDGET_S = 0.3
# Operations after which sound may go on: the player's (play, resume, park, controls).
SOUND_OPS = ("youtube.",)
# Hosts whose pages may make sound without being told (the player); every other page is
# quiet from its first script on.
SOUND_HOSTS = ("youtube.com", "www.youtube.com", "m.youtube.com", "music.youtube.com")

# Secret per process: the name of the event that tells a page to go quiet or loud. A page
# cannot listen for a name it cannot guess.
_CHANNEL = "sb-" + secrets.token_hex(12)

# Frames may load web addresses only: no `mailto:`/`tel:`/app scheme (a CSP of the page's own).
FRAME_CSP = "frame-src http: https: data: blob: about:"

SCREEN_JS = """
(() => {
  const CHANNEL = %(channel)r, SOUND_HOSTS = %(hosts)s;
  const noop = () => undefined;
  for (const name of ['alert', 'print']) {
    try { Object.defineProperty(window, name, {value: noop, writable: true, configurable: true}); }
    catch (e) {}
  }
  try { window.confirm = () => false; window.prompt = () => null; } catch (e) {}
  // External protocols (mailto:, tel:, zoommtg:, ...): no frame and no link click may ask
  // Chrome to open another application ("Open xdg-open?").
  const WEB = /^(https?|about|blob|data|javascript):$/i;
  const web = (v) => {
    try { return WEB.test(new URL(String(v), location.href).protocol); } catch (e) { return true; }
  };
  const Frame = window.HTMLIFrameElement;
  const src = Frame && Object.getOwnPropertyDescriptor(Frame.prototype, 'src');
  if (src) {
    Object.defineProperty(Frame.prototype, 'src', {configurable: true, enumerable: true,
      get() { return src.get.call(this); },
      set(v) { if (web(v)) src.set.call(this, v); }});
    const setAttribute = Element.prototype.setAttribute;
    Element.prototype.setAttribute = function (name, value) {
      if (this instanceof Frame && String(name).toLowerCase() === 'src' && !web(value)) return;
      return setAttribute.call(this, name, value);
    };
  }
  // Frames may load web addresses only, however they are made (HTML, innerHTML, script):
  // Chrome itself refuses the rest. A CSP delivered by a <meta> in a <head> stays in force
  // after the element is gone, so it is inserted and removed at once (before the parser has
  // made anything, in a new document): no trace in the page's DOM.
  try {
    const meta = document.createElement('meta');
    meta.httpEquiv = 'Content-Security-Policy';
    meta.content = %(frame_csp)r;
    if (!document.documentElement) {
      const html = document.createElement('html'), head = document.createElement('head');
      head.append(meta); html.append(head); document.append(html); html.remove();
    } else if (document.head) {
      document.head.append(meta); meta.remove();
    }
  } catch (e) {}
  document.addEventListener('click', (e) => {
    const a = e.target && e.target.closest && e.target.closest('a[href], area[href]');
    if (a && !web(a.href)) e.preventDefault();
  }, true);
  // Any navigation of this window to such an address, user gesture or not (Chromium's
  // Navigation API fires `navigate` before the navigation starts, also cross-document).
  if (window.navigation && navigation.addEventListener) {
    navigation.addEventListener('navigate', (e) => {
      if (e.cancelable && e.destination && !web(e.destination.url)) e.preventDefault();
    });
  }
  const open = window.open;
  if (typeof open === 'function') {
    const guarded = function (url) {
      if (url !== undefined && String(url) !== '' && !web(url)) return null;
      return open.apply(this, arguments);
    };
    const spec = {value: guarded, writable: true, configurable: true};
    try { Object.defineProperty(window, 'open', spec); } catch (e) {}
  }
  let quiet = !SOUND_HOSTS.includes(location.hostname);
  const media = new Set(), contexts = new Set();
  let suspendAudio = null;
  const Media = window.HTMLMediaElement;
  const play = Media && Media.prototype.play, pause = Media && Media.prototype.pause;
  const hush = (el) => { try { pause.call(el); } catch (e) {} };
  if (Media) {
    Media.prototype.play = function () {
      media.add(this);
      if (quiet) {
        hush(this);
        return Promise.reject(new DOMException('quiet', 'NotAllowedError'));
      }
      return play.apply(this, arguments);
    };
    document.addEventListener('play', (e) => {
      media.add(e.target);
      if (quiet) hush(e.target);
    }, true);
  }
  for (const name of ['AudioContext', 'webkitAudioContext']) {
    const Original = window[name];
    if (typeof Original !== 'function') continue;
    const resume = Original.prototype.resume, suspend = Original.prototype.suspend;
    suspendAudio = suspend;
    Original.prototype.resume = function () {
      return quiet ? Promise.resolve() : resume.apply(this, arguments);
    };
    const Wrapped = new Proxy(Original, {construct(target, args, newTarget) {
      const ctx = Reflect.construct(target, args, newTarget);
      contexts.add(ctx);
      if (quiet) suspend.call(ctx).catch(noop);
      return ctx;
    }});
    const spec = {value: Wrapped, writable: true, configurable: true};
    try { Object.defineProperty(window, name, spec); } catch (e) {}
  }
  window.addEventListener(CHANNEL, (e) => {
    quiet = e.detail !== 'loud';
    if (!quiet) return;
    for (const el of document.querySelectorAll('audio, video')) media.add(el);
    for (const el of media) hush(el);
    for (const ctx of contexts) { try { suspendAudio.call(ctx).catch(noop); } catch (e) {} }
  }, true);
})();
"""


def screen_script() -> str:
    """The init script of the clean screen (this process's channel name inside)."""
    hosts = "[" + ", ".join(repr(h) for h in SOUND_HOSTS) + "]"
    return SCREEN_JS % {"channel": _CHANNEL, "hosts": hosts, "frame_csp": FRAME_CSP}


INIT_SCRIPTS: list[Callable[[], str]] = [screen_script]


def add_init_script(source: Callable[[], str]) -> None:
    """Run `source()` in every document of the owned tab, before the page's own scripts."""
    if source not in INIT_SCRIPTS:
        INIT_SCRIPTS.append(source)


async def _install_init_scripts(page: Page, settings: Settings) -> None:
    """Every init script, for documents to come and (evaluated now) for the one shown."""
    for source in INIT_SCRIPTS:
        script = source()
        await page.add_init_script(script)
        await _evaluate(page, script)


# The browser session that set `deny`, per connection. Chrome puts a session's download
# behavior back to its default when that session detaches (measured on Chromium 156: a session
# detached at once left Playwright's own `allowAndName` undone, and on a Chrome without the
# `download_restrictions` preference an attachment was saved to ~/Downloads), so the session
# lives as long as the connection: it is carried by the browser object (a slot like
# `PerPage`'s), so it goes with the connection when the driver drops it.
_DENY_SESSIONS: PerPage[CDPSession] = PerPage("deny_downloads_session")


async def _deny_downloads(page: Page, settings: Settings) -> None:
    """Downloads refused by Chrome: no file, no bubble; Playwright still sees the attempt.
    Sent again for every page the driver takes (another client may have changed it)."""
    browser = page.context.browser
    assert browser is not None  # a page of a connected browser
    session = _DENY_SESSIONS.get(browser)
    if session is None:
        session = _DENY_SESSIONS.set(browser, await browser.new_browser_cdp_session())
    await session.send("Browser.setDownloadBehavior", {"behavior": "deny", "eventsEnabled": True})


INSTALLERS: list[Installer] = [_install_init_scripts, _deny_downloads]


def add_installer(installer: Installer) -> None:
    """Run `installer(page, settings)` whenever the driver takes a page (once per page)."""
    if installer not in INSTALLERS:
        INSTALLERS.append(installer)


_SESSIONS: PerPage[CDPSession] = PerPage("screen_session")


async def prepare_page(page: Page, settings: Settings) -> None:
    """Apply every installer to `page` within `INSTALL_BUDGET_S`; never raises."""
    started = time.monotonic()
    until = started + INSTALL_BUDGET_S
    for installer in tuple(INSTALLERS):
        name = getattr(installer, "__qualname__", repr(installer))
        left = until - time.monotonic()
        if left <= 0:
            log.warning("stage.install_skipped", installer=name, reason="out of time")
            continue
        try:
            await asyncio.wait_for(installer(page, settings), left)
        except (TimeoutError, PlaywrightError, AttributeError) as exc:
            log.warning("stage.install_failed", installer=name, error=str(exc)[:200])
    log.debug("stage.prepared", elapsed_ms=int((time.monotonic() - started) * 1000))


async def after_op(page: Page, op: str) -> None:
    """An operation ended: unless it was the player's, the page makes no sound."""
    if op.startswith(SOUND_OPS):
        return
    await set_sound(page, loud=False)


async def set_sound(page: Page, *, loud: bool) -> None:
    """Let the page's media play (`loud`), or pause it and suspend its audio; bounded."""
    detail = "loud" if loud else "quiet"
    expression = f"window.dispatchEvent(new CustomEvent({_CHANNEL!r}, {{detail: {detail!r}}})); 0"
    try:
        await asyncio.wait_for(_evaluate(page, expression), QUIET_BUDGET_S)
    except (TimeoutError, PlaywrightError) as exc:
        log.info("stage.sound_not_set", loud=loud, error=str(exc)[:200])


async def _evaluate(page: Page, expression: str) -> Any:
    """Run `expression` in the page's main world over CDP, without a user gesture (Playwright's
    `evaluate` would grant one, letting the page open prompts for the next seconds)."""
    session = _SESSIONS.get(page)
    if session is None:
        session = _SESSIONS.set(page, await page.context.new_cdp_session(page))
    reply = await session.send(
        "Runtime.evaluate", {"expression": expression, "userGesture": False, "silent": True}
    )
    return reply.get("result", {}).get("value")
