"""Generate browser_core/safety/_confusables.py from Unicode's UTS #39 `confusables.txt`.

The envelope only needs the look-alikes of ASCII (fence words, chat-role tag names, angle
brackets), so it keeps every mapping whose prototype is ASCII: a few kB instead of 650 kB,
and no runtime dependency. Re-run it when Unicode publishes a new version:

  python scripts/gen_confusables.py path/to/confusables.txt [> browser_core/safety/_confusables.py]
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections import defaultdict
from pathlib import Path

WIDTH = 92  # characters of escaped text per source line (the line limit is 100)


def read_mappings(text: str) -> dict[str, str]:
    """`source ; prototype ; MA` lines as {source character: prototype string}."""
    mappings: dict[str, str] = {}
    for line in text.splitlines():
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        source, prototype, _kind = (field.strip() for field in data.split(";"))
        mappings[chr(int(source, 16))] = "".join(chr(int(h, 16)) for h in prototype.split())
    return mappings


def header_field(text: str, name: str) -> str:
    match = re.search(rf"^#\s*{name}:\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else "unknown"


def escape(chars: str) -> str:
    return "".join(
        c if c.isascii() and c.isprintable() and c not in '"\\' else _esc(c) for c in chars
    )


def _esc(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def chunks(escaped: str) -> list[str]:
    """Split an escaped string at escape boundaries into pieces of at most WIDTH characters."""
    pieces, current = [], ""
    for token in re.findall(r"\\U[0-9a-f]{8}|\\u[0-9a-f]{4}|\\.|.", escaped):
        if len(current) + len(token) > WIDTH:
            pieces.append(current)
            current = ""
        current += token
    return [*pieces, current] if current else pieces


def render(text: str, digest: str) -> str:
    mappings = read_mappings(text)
    by_prototype: dict[str, list[str]] = defaultdict(list)
    for source, prototype in mappings.items():
        if prototype.isascii():
            by_prototype[prototype].append(source)
    kept = sum(len(v) for v in by_prototype.values())
    out = [
        '"""TR39 confusables whose prototype is ASCII: generated, do not edit by hand.',
        "",
        "Source: Unicode Security Mechanisms (UTS #39) confusables.txt, "
        f"version {header_field(text, 'Version')},",
        f"dated {header_field(text, 'Date')}, sha256 {digest[:32]}",
        f"{digest[32:]}. Kept: the {kept} of {len(mappings)} mappings whose prototype is",
        "ASCII. Regenerate with scripts/gen_confusables.py. Unicode data: Unicode terms of use",
        "(https://www.unicode.org/terms_of_use.html).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        f'UNICODE_VERSION = "{header_field(text, "Version")}"',
        "",
        "# prototype -> every character that TR39 maps to it",
        "BY_PROTOTYPE: dict[str, str] = {",
    ]
    for prototype in sorted(by_prototype):
        sources = escape("".join(sorted(by_prototype[prototype])))
        key = escape(prototype)
        pieces = chunks(sources)
        if len(pieces) == 1 and len(key) + len(pieces[0]) < WIDTH - 4:
            out.append(f'    "{key}": "{pieces[0]}",')
            continue
        out.append(f'    "{key}": (')
        out.extend(f'        "{piece}"' for piece in pieces)
        out.append("    ),")
    out.append("}")
    out.append("")
    out.append("# source character -> prototype, for str.translate")
    out.append("SKELETON: dict[int, str] = {")
    out.append(
        "    ord(char): prototype for prototype, chars in BY_PROTOTYPE.items() for char in chars"
    )
    out.append("}")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    raw = Path(argv[0]).read_bytes()
    sys.stdout.write(render(raw.decode("utf-8-sig"), hashlib.sha256(raw).hexdigest()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
