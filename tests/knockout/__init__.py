"""Switches that turn one stream-safety or screen defense off, for the knock-out run only.

Each `Defense` names what it keeps off the screen (or out of reach), the code it removes
while a test run has it switched off, and the tests that must then fail: a defense that no
test notices is one that could be lost without anyone seeing it (`make knockout`,
scripts/knockout.py, docs/testing.md).

Nothing here is reachable from the product: this folder is not part of the package, and a
switch is applied only by the knock-out run, to the test process (`-p tests.knockout.plugin
--knockout NAME`) and to the processes the tests start (a `sitecustomize.py` on a PYTHONPATH
only that run sets). A switch patches a module right after it is imported, before any other
module takes names from it; a switch whose target moved fails loudly instead of silently
leaving the defense on.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

Patch = Callable[[ModuleType], None]


class KnockoutError(RuntimeError):
    """A switch could not be applied: its target is not where it was (the code moved)."""


@dataclass(frozen=True)
class Defense:
    """One defense: what it guards, how it is switched off, which tests notice."""

    name: str
    guards: str
    patches: tuple[tuple[str, Patch], ...]
    tests: tuple[str, ...]


# -- the patches ---------------------------------------------------------------------------------


def _js(old: str, new: str) -> Patch:
    """Replace `old` in the clean screen's init script (it must be there)."""

    def patch(module: ModuleType) -> None:
        script = str(getattr(module, "SCREEN_JS", ""))
        if old not in script:
            raise KnockoutError(f"the screen script no longer holds {old!r}")
        module.SCREEN_JS = script.replace(old, new)  # type: ignore[attr-defined]

    return patch


def _installer_off(name: str) -> Patch:
    """Take the installer `name` (a function of the patched module) out of the screen's list."""

    def patch(module: ModuleType) -> None:
        from browser_core.stage import _screen

        installer = getattr(module, name, None)
        if installer not in _screen.INSTALLERS:
            raise KnockoutError(f"{module.__name__}.{name} is not a screen installer")
        _screen.INSTALLERS[_screen.INSTALLERS.index(installer)] = _nothing

    return patch


async def _nothing(*_: Any) -> None:
    return None


def _pref_off(table: str, key: str) -> Patch:
    def patch(module: ModuleType) -> None:
        prefs = getattr(module, table)
        if key not in prefs:
            raise KnockoutError(f"{table} holds no {key!r}")
        del prefs[key]

    return patch


def _attribute(name: str, value: Any) -> Patch:
    def patch(module: ModuleType) -> None:
        owner, _, attr = name.rpartition(".")
        target = getattr(module, owner) if owner else module
        if not hasattr(target, attr):
            raise KnockoutError(f"{module.__name__}.{name} does not exist")
        setattr(target, attr, value)

    return patch


async def _count_only(self: Any, download: Any) -> None:
    """The driver's download handler without its `download.cancel()`."""
    self.seen += 1


async def _leave_dialog(dialog: Any) -> None:
    """A dialog handler that answers nothing (Playwright then leaves the dialog open)."""


async def _keep_popup(popup: Any) -> None:
    """A popup handler that closes nothing."""


async def _let_through(self: Any, route: Any) -> None:
    """The driver's route guard letting every request through."""
    await route.fallback()


async def _continue_all(self: Any, event: dict[str, Any]) -> None:
    """The Fetch guard continuing every paused request."""
    from playwright.async_api import Error

    with contextlib.suppress(Error):
        await self.session.send("Fetch.continueRequest", {"requestId": event["requestId"]})


async def _auth_default(self: Any, event: dict[str, Any]) -> None:
    """The Fetch guard leaving sign-in challenges to Chrome (its own dialog)."""
    from playwright.async_api import Error

    with contextlib.suppress(Error):
        await self.session.send(
            "Fetch.continueWithAuth",
            {"requestId": event["requestId"], "authChallengeResponse": {"response": "Default"}},
        )


def _on_auth_default(self: Any, event: dict[str, Any]) -> None:
    import asyncio

    task = asyncio.ensure_future(_auth_default(self, event))
    self._tasks.add(task)
    task.add_done_callback(self._tasks.discard)


def _no_policy(url: str, allow_hosts: Any = (), *, resolver: Any = None) -> str:
    """`check_url` that only parses: every scheme and host is let through."""
    from browser_core.safety._policy import canonical_url

    return canonical_url(url).href


def _no_reason(_: str) -> None:
    return None


def _no_shim(user_data_dir: str) -> None:
    return None


def _as_is(text: str) -> str:
    return text


# -- the defenses -------------------------------------------------------------------------------

SCREEN = "browser_core.stage._screen"
GUARDS = "browser_core.driver._page_guards"
PROFILE = "browser_core.chrome._profile"
LAUNCH = "browser_core.chrome._launch"
FETCH = "browser_core.safety._fetch_guard"

_DENY = (SCREEN, _installer_off("_deny_downloads"))
_CANCEL = (GUARDS, _attribute("Downloads.cancel", _count_only))
_RESTRICT = (PROFILE, _pref_off("SCREEN_PREFS", "download_restrictions"))

DEFENSES: tuple[Defense, ...] = ()  # filled in below


def _defense(name: str, guards: str, patches: Sequence[tuple[str, Patch]], *tests: str) -> None:
    global DEFENSES
    DEFENSES = (*DEFENSES, Defense(name, guards, tuple(patches), tests))


SCREEN_TESTS = "tests/test_stage_screen.py::"
HAZARD = SCREEN_TESTS + "test_a_hazard_fired_after_the_read_leaves_the_screen_as_the_calm_page"
CLICK = SCREEN_TESTS + "test_a_page_holding_a_click_cannot_send_itself_to_another_program"
BARE = (
    SCREEN_TESTS + "test_on_a_chrome_we_did_not_start_the_page_defenses_alone_keep_the_screen_clean"
)
NO_DRIVER = (
    SCREEN_TESTS
    + "test_with_no_driver_attached_chrome_itself_shows_no_print_preview_and_no_sign_in"
)
DRIVER_TESTS = "tests/test_driver.py::"
HOSTILE = "tests/test_hostile.py::"
DOWNLOADS_REFUSED = DRIVER_TESTS + "test_dialogs_are_dismissed_and_downloads_refused"
LATE_DOWNLOAD = HOSTILE + "test_an_attachment_opened_by_a_timer_after_the_process_left_is_not_saved"

_defense(
    "download-deny",
    "a page's download: Chrome told over CDP to refuse it while the driver is attached",
    [_DENY],
    DOWNLOADS_REFUSED,
    DRIVER_TESTS + "test_on_a_chrome_we_did_not_start_no_tab_saves_a_download_while_attached",
    BARE + "[download]",
)
_defense(
    "download-cancel",
    "a download let through anyway: the driver cancels each one it sees",
    [_CANCEL],
    DRIVER_TESTS + "test_a_download_another_client_lets_through_is_cancelled_by_the_driver",
)
_defense(
    "download-restrictions",
    "a download with no driver attached: the profile's download_restrictions=3",
    [_RESTRICT],
    LATE_DOWNLOAD,
)
_defense(
    "downloads-all",
    "all three download defenses at once",
    [_DENY, _CANCEL, _RESTRICT],
    HOSTILE + "test_a_download_is_reported_not_saved",
    LATE_DOWNLOAD,
    DOWNLOADS_REFUSED,
    HAZARD + "[download]",
)
_ANSWER = (GUARDS, _attribute("_answer_dialog", _leave_dialog))
_NOOPS = (
    (SCREEN, _js("['alert', 'print']", "['print']")),
    (SCREEN, _js("window.confirm = () => false; window.prompt = () => null;", "")),
)
_defense(
    "dialog-answering",
    "a JS dialog the page script does not stop ('Leave site?'): the driver's handler answers it",
    [_ANSWER],
    CLICK + "[ask-before-leaving]",
)
_defense(
    "dialog-noops",
    "alert/confirm/prompt made no-ops in every document (also once the driver has left)",
    _NOOPS,
    HOSTILE + "test_a_dialog_opened_by_a_timer_after_the_process_left_draws_nothing",
)
_defense(
    "dialogs-all",
    "both dialog defenses at once",
    [_ANSWER, *_NOOPS],
    HOSTILE + "test_dialogs_are_dismissed_and_the_read_answers",
    DOWNLOADS_REFUSED,
)
_defense(
    "popup-refusal",
    "a tab a page opens (with a click's user activation): the driver closes it",
    [(GUARDS, _attribute("_close_popup", _keep_popup))],
    CLICK + "[tab-later]",
)
_defense(
    "print-noop",
    "print() made a no-op in every document (no print preview), while attached",
    [(SCREEN, _js("['alert', 'print']", "['alert']"))],
    BARE + "[print]",
)
_defense(
    "print-pref",
    "the profile's printing.enabled=false (no print preview, Chrome-wide)",
    [(PROFILE, _pref_off("SCREEN_PREFS", "printing"))],
    NO_DRIVER + "[print]",
    SCREEN_TESTS + "test_doctor_names_what_a_chrome_we_attach_to_lacks_for_a_clean_screen",
)
_AUTH_CANCEL = (FETCH, _attribute("FetchGuard.on_auth", _on_auth_default))
_AUTH_SCHEMES = (PROFILE, _pref_off("LOCAL_STATE_PREFS", "auth"))
_defense(
    "auth-cancel",
    "an HTTP sign-in challenge: the Fetch guard cancels it (no sign-in dialog), while attached",
    [_AUTH_CANCEL],
    BARE + "[auth-iframe]",
)
_defense(
    "auth-schemes",
    "Local State auth.schemes=negotiate: Chrome offers no sign-in dialog, Chrome-wide",
    [_AUTH_SCHEMES],
    NO_DRIVER + "[auth-iframe]",
)
_defense(
    "auth-all",
    "both sign-in defenses at once (on our own Chrome, with the driver attached)",
    [_AUTH_CANCEL, _AUTH_SCHEMES],
    HAZARD + "[auth-iframe]",
)
_defense(
    "protocols-page",
    "mailto:/tel:/app schemes refused in the page (frames, links, navigations, window.open)",
    [
        (SCREEN, _js("try { return WEB.test(", "try { return true || WEB.test(")),
        (SCREEN, _js("meta.httpEquiv = 'Content-Security-Policy';", "meta.name = 'knocked-out';")),
    ],
    BARE + "[protocols]",
    BARE + "[protocol-frames-html]",
    BARE + "[protocol-frames-later]",
)
_defense(
    "protocols-shim",
    "the xdg-settings shim on Chrome's PATH: no 'Open xdg-open?' prompt, Chrome-wide",
    [(LAUNCH, _attribute("pin_protocol_shim", _no_shim))],
    SCREEN_TESTS + "test_with_no_driver_attached_chrome_itself_never_asks_to_open_another_program",
)
_defense(
    "page-sound",
    "a page's sound: media paused and Web Audio suspended unless the player plays",
    [
        (
            SCREEN,
            _js("let quiet = !SOUND_HOSTS.includes(location.hostname);", "let quiet = false;"),
        ),
        (SCREEN, _js("quiet = e.detail !== 'loud';", "quiet = false;")),
    ],
    SCREEN_TESTS + "test_a_page_makes_no_sound_once_the_read_returns",
)
_defense(
    "address-policy",
    "internal addresses and non-web schemes refused before anything is opened",
    [("browser_core.safety._policy", _attribute("check_url", _no_policy))],
    "tests/test_policy.py::test_internal_addresses_are_refused"
    "[http://169.254.169.254/latest/meta-data/]",
    "tests/test_policy.py::test_only_http_and_https_are_opened[file:///etc/passwd]",
    DRIVER_TESTS + "test_policy_refuses_before_anything_is_shown[file:///etc/passwd]",
    HOSTILE + "test_the_cli_refuses_a_file_url_with_a_one_line_reason",  # in the CLI's process
)
_defense(
    "egress-guard",
    "every connection Chrome makes checked after name resolution (the SOCKS5 guard)",
    [
        ("browser_core.safety._policy", _attribute("name_reason", _no_reason)),
        ("browser_core.safety._policy", _attribute("address_reason", _no_reason)),
    ],
    "tests/test_egress.py::test_private_link_local_and_metadata_addresses_are_refused_before_"
    "connecting[http://169.254.169.254/latest/meta-data/]",
    "tests/test_egress.py::test_images_and_fetch_to_internal_names_reach_nothing[fetch-localhost]",
    "tests/test_egress.py::test_dns_rebinding_has_no_window",
)
_ROUTE = (GUARDS, _attribute("PageGuards._guard_request", _let_through))
_FETCH = (FETCH, _attribute("FetchGuard._decide", _continue_all))
_defense(
    "route-guard",
    "a page's requests to internal addresses refused before a page hook's route sees them",
    [_ROUTE],
    DRIVER_TESTS + "test_a_page_hook_never_sees_a_request_to_an_internal_address",
)
_defense(
    "fetch-guard",
    "every tab's documents, redirect hops and requests to internal addresses (a cross-site "
    "frame's included) refused over CDP Fetch",
    [_FETCH],
    DRIVER_TESTS + "test_a_redirect_to_an_internal_address_is_refused",
    DRIVER_TESTS + "test_a_frame_from_another_site_cannot_probe_an_internal_service_either",
    "tests/test_egress.py::test_without_the_proxy_the_fetch_guard_stops_redirect_hops_before_"
    "they_are_sent[302]",
)
_defense(
    "request-guards",
    "the route and Fetch guards at once",
    [_ROUTE, _FETCH],
    DRIVER_TESTS + "test_a_page_cannot_frame_or_probe_an_internal_service",
    DRIVER_TESTS + "test_a_page_hook_never_sees_a_request_to_an_internal_address",
)
_defense(
    "envelope-fence",
    "web text neutralised so it cannot forge the envelope's fences or role tags",
    [("browser_core.safety._envelope", _attribute("neutralize", _as_is))],
    "tests/test_envelope.py::test_a_forged_fence_with_the_real_nonce_is_neutralized",
    "tests/test_envelope.py::test_page_text_cannot_end_the_envelope_early[end_untrusted_web_extract]",
    HOSTILE + "test_a_page_cannot_break_out_of_the_envelope",
)
_defense(
    "consent-answering",
    "cookie-consent banners answered on the visible page (autoconsent)",
    [("browser_core.stage._consent", _installer_off("install_consent"))],
    "tests/test_stage_consent.py::test_a_read_leaves_the_banner_rejected_and_off_the_screen"
    "[onetrust]",
    "tests/test_stage_consent.py::test_accept_clicks_the_accept_button",
)

BY_NAME = {defense.name: defense for defense in DEFENSES}


# -- applying a switch ---------------------------------------------------------------------------


class _Loader(importlib.abc.Loader):
    """Runs the real loader, then the patches."""

    def __init__(self, loader: importlib.abc.Loader, patches: list[Patch]) -> None:
        self.loader, self.patches = loader, patches

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        for patch in self.patches:
            patch(module)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Patches named modules as they are imported (first on `sys.meta_path`)."""

    def __init__(self) -> None:
        self.patches: dict[str, list[Patch]] = {}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        patches = self.patches.get(fullname)
        if not patches:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader, patches)
                return spec
        return None


_HOOK = _AfterImport()


def switch_off(name: str) -> Defense:
    """Switch the defense `name` off in this process (before its modules are imported)."""
    defense = BY_NAME.get(name)
    if defense is None:
        raise KnockoutError(f"no defense named {name!r}; known: {', '.join(BY_NAME)}")
    for module_name, patch in defense.patches:
        if module_name in sys.modules:
            raise KnockoutError(f"{module_name} was imported before the switch: too late")
        _HOOK.patches.setdefault(module_name, []).append(patch)
    if _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)
    return defense
