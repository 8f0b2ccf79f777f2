"""The service token: `SB_SERVICE_TOKEN`, else a file made at first start (0600, in a 0700
folder) that clients on this machine read."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from browser_core import (
    Settings,
)

from ..client import TOKEN_FILE_NAME


def token_path(settings: Settings) -> Path:
    return Path(settings.state_dir).expanduser() / TOKEN_FILE_NAME


def ensure_token(settings: Settings) -> tuple[str, str]:
    """(token, where it came from): `SB_SERVICE_TOKEN`, else the token file (made at first
    start, mode 0600, in a 0700 directory) that clients on this machine read."""
    if settings.service_token is not None:
        return settings.service_token.get_secret_value(), "SB_SERVICE_TOKEN"
    path = token_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    _private_folder(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        os.chmod(path, 0o600)
        token = path.read_text(encoding="utf-8").strip()
        if token:
            return token, str(path)
        path.unlink()
        return ensure_token(settings)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(secrets.token_urlsafe(32) + "\n")
    return path.read_text(encoding="utf-8").strip(), str(path)


def _private_folder(folder: Path) -> None:
    """The state folder is 0700 (it may have been made earlier, by Chrome's profile or an
    older version, with the umask's 0755): only when this user owns it."""
    info = folder.stat()
    if info.st_uid == os.getuid() and info.st_mode & 0o077:
        os.chmod(folder, 0o700)
