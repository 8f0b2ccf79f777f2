"""What a Playwright error means to the driver: classified by type and name
(`classify_error`); the few text markers Playwright gives no type for live in `ERROR_MARKERS`,
one row each, with a test per row (tests/test_driver_errors.py)."""

from __future__ import annotations

from enum import StrEnum

from playwright.async_api import TimeoutError as PlaywrightTimeoutError


class ErrorClass(StrEnum):
    """What a Playwright error means to the driver."""

    TIMEOUT = "timeout"  # a Playwright wait ran out (its own `timeout=`)
    CLOSED = "closed"  # the page, the connection or the renderer is gone
    DOWNLOAD = "download"  # a navigation turned into a download
    ABORTED = "aborted"  # a navigation was aborted (a 204, a download, Chrome going away)
    MOVED = "moved"  # the page went on to another document while it was read or opened
    OTHER = "other"


# The only text markers left: Playwright gives these no type, name or code (Playwright 1.65,
# measured on Chromium 156). One row each; tests/test_driver_errors.py has a test per row.
ERROR_MARKERS: tuple[tuple[str, ErrorClass], ...] = (
    ("Download is starting", ErrorClass.DOWNLOAD),  # Page.goto to an attachment
    ("net::ERR_ABORTED", ErrorClass.ABORTED),  # Page.goto to a 204, or the load was cancelled
    ("Target crashed", ErrorClass.CLOSED),  # the renderer crashed (a plain Error)
    ("no object with guid", ErrorClass.CLOSED),  # a Playwright object of a closed page
    # Page.content while the document is replaced (a meta refresh or script redirect commits)
    ("page is navigating and changing the content", ErrorClass.MOVED),
    # Page.goto whose navigation another one replaced before it committed (a script redirect
    # or meta refresh of the document that just came, or of the one that was there)
    ("is interrupted by another navigation", ErrorClass.MOVED),
)


def classify_error(exc: BaseException) -> ErrorClass:
    """Classify a Playwright error: by type and name first, then by `ERROR_MARKERS`."""
    if isinstance(exc, PlaywrightTimeoutError):
        return ErrorClass.TIMEOUT
    # The class is not exported; errors raised on the client side have no `.name`.
    if "TargetClosedError" in (getattr(exc, "name", None), type(exc).__name__):
        return ErrorClass.CLOSED
    text = str(exc)
    for marker, kind in ERROR_MARKERS:
        if marker in text:
            return kind
    return ErrorClass.OTHER


def is_closed_error(exc: BaseException) -> bool:
    return classify_error(exc) is ErrorClass.CLOSED


def short(exc: BaseException) -> str:
    """The first line of an error's text (at most 300 characters), for messages and logs."""
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
