"""A virtual display of our own whose whole screen can be read: what a viewer of the broadcast
would see, Chrome's own UI included (tabs, dialogs, bubbles), not just the page.

Xvfb is started with `-fbdir`, so its framebuffer is a live XWD file; `grab()` reads it (no
ImageMagick needed) and `save_png()` writes it as a PNG with the standard library alone.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

SIZE = (1280, 800)


def free_display(first: int = 140, last: int = 240) -> int:
    """A display number no X server uses (never :1, the product's default)."""
    for number in range(first, last):
        if not (
            Path(f"/tmp/.X11-unix/X{number}").exists() or Path(f"/tmp/.X{number}-lock").exists()
        ):
            return number
    raise RuntimeError(f"no free X display between :{first} and :{last - 1}")


class Display:
    """An Xvfb display (`:N`) with a readable framebuffer; `close()` stops it."""

    def __init__(self, size: tuple[int, int] = SIZE) -> None:
        xvfb = shutil.which("Xvfb")
        if xvfb is None:
            raise RuntimeError("Xvfb is not installed: run `make setup` (Debian package xvfb)")
        self.size = size
        self.number = free_display()
        self.name = f":{self.number}"
        self._dir = Path(tempfile.mkdtemp(prefix="sb-display-"))
        screen = f"{size[0]}x{size[1]}x24"
        args = [xvfb, self.name, "-screen", "0", screen, "-nolisten", "tcp"]
        args += ["-nocursor", "-fbdir", str(self._dir)]  # no pointer on the screen we look at
        self.proc = subprocess.Popen(
            args,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._frame = self._dir / "Xvfb_screen0"
        until = time.monotonic() + 10
        while not (self._frame.exists() and Path(f"/tmp/.X11-unix/X{self.number}").exists()):
            if self.proc.poll() is not None or time.monotonic() > until:
                self.close()
                raise RuntimeError(f"Xvfb did not start on {self.name}")
            time.sleep(0.05)

    def grab(self) -> np.ndarray:
        """The whole screen now, as a height x width x 3 array of RGB bytes."""
        return read_xwd(self._frame.read_bytes())

    def save_png(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png_bytes(self.grab()))
        return path

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self._dir, ignore_errors=True)


def read_xwd(data: bytes) -> np.ndarray:
    """Decode the XWD file Xvfb keeps (ZPixmap, 32 bits a pixel) into RGB."""
    fields = struct.unpack(">25I", data[:100])
    header_size, width, height = fields[0], fields[4], fields[5]
    byte_order, bits, line = fields[7], fields[11], fields[12]
    colors = fields[19]
    if bits != 32:
        raise ValueError(f"unsupported XWD pixel size: {bits} bits")
    start = header_size + colors * 12
    pixels = np.frombuffer(data, dtype=np.uint8, count=line * height, offset=start)
    rows = pixels.reshape(height, line)[:, : width * 4].reshape(height, width, 4)
    return rows[:, :, [2, 1, 0]] if byte_order == 0 else rows[:, :, [1, 2, 3]]


def png_bytes(rgb: np.ndarray) -> bytes:
    """A PNG of an RGB array (filter 0 on every row; zlib does the rest)."""
    height, width, _ = rgb.shape
    raw = np.zeros((height, width * 3 + 1), dtype=np.uint8)
    raw[:, 1:] = rgb.reshape(height, width * 3)

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6))
        + chunk(b"IEND", b"")
    )
