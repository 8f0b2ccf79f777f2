"""The base of stream-browser: settings, logging, the shared result envelope, the error tree,
the navigation policy and the CDP driver for the broadcast Chrome."""

from ._cdp_raw import CdpSocket, RawCdpError
from ._errors import (
    BlockedUrl,
    CdpUnreachable,
    FailureKind,
    NavigationFailed,
    OperationTimeout,
    PageBlocked,
    ProviderError,
    ScreenHeld,
    SettingsError,
    StreamBrowserError,
)
from ._logging import bound_request, configure_logging, new_request_id
from ._memory import trim_heap
from ._results import Hop, Source, ToolExecutionResult
from ._settings import Settings, build_settings, load_settings
from ._sync import LoopThread, SyncDriver, shared_loop
from .chrome import (
    ChromeProcess,
    cdp_targets,
    cdp_version,
    ensure_state_dir,
    is_credential_name,
    launch_chrome,
    load_state,
    save_state,
    screen_findings,
    state_file,
    stop_pid,
)
from .driver import Deadline, Driver, NavOutcome, Peeked, document_html
from .safety._egress import egress_status
from .safety._envelope import (
    Answer,
    Envelope,
    neutralize,
    parse_envelope,
    wrap_answer,
    wrap_untrusted,
)
from .safety._policy import check_url, is_allowed

__all__ = [
    "Answer",
    "BlockedUrl",
    "CdpSocket",
    "CdpUnreachable",
    "ChromeProcess",
    "Deadline",
    "Driver",
    "Envelope",
    "FailureKind",
    "Hop",
    "LoopThread",
    "NavOutcome",
    "NavigationFailed",
    "OperationTimeout",
    "PageBlocked",
    "Peeked",
    "ProviderError",
    "RawCdpError",
    "ScreenHeld",
    "Settings",
    "SettingsError",
    "Source",
    "StreamBrowserError",
    "SyncDriver",
    "ToolExecutionResult",
    "bound_request",
    "build_settings",
    "cdp_targets",
    "cdp_version",
    "check_url",
    "configure_logging",
    "document_html",
    "egress_status",
    "ensure_state_dir",
    "is_allowed",
    "is_credential_name",
    "launch_chrome",
    "load_settings",
    "load_state",
    "neutralize",
    "new_request_id",
    "parse_envelope",
    "save_state",
    "screen_findings",
    "shared_loop",
    "state_file",
    "stop_pid",
    "trim_heap",
    "wrap_answer",
    "wrap_untrusted",
]
