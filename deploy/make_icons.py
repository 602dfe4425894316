"""Draws the installable app's icons (static/icons/*.png): a white card with a
spade on the felt green.  Pure Python (zlib), so the icons can be made again
anywhere without an image library: `python deploy/make_icons.py`.

The maskable icon keeps the card inside the middle 80% (the safe zone a phone
may crop to a circle or a squircle); the others fill more of the square.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "static" / "icons"
FELT = (15, 77, 50)
CARD = (255, 255, 255)
INK = (34, 34, 34)


def _inside_card(x: float, y: float, w: float, h: float, r: float) -> bool:
    """A rounded rectangle centred on 0, 0."""
    dx, dy = max(abs(x) - (w / 2 - r), 0.0), max(abs(y) - (h / 2 - r), 0.0)
    return abs(x) <= w / 2 and abs(y) <= h / 2 and dx * dx + dy * dy <= r * r


def _inside_spade(x: float, y: float) -> bool:
    """A spade in a unit box (x, y in -1..1, y down): two lobes, a point, a stem."""
    lobe = 0.42
    for cx in (-0.36, 0.36):
        if (x - cx) ** 2 + (y - 0.12) ** 2 <= lobe * lobe:
            return True
    # the upper point: a triangle from the lobes' tops to the tip
    if -0.95 <= y <= 0.2 and abs(x) <= 0.78 * (y + 0.95) / 1.15:
        return True
    # the stem, widening to its foot
    return 0.2 <= y <= 0.95 and abs(x) <= 0.08 + 0.22 * (y - 0.2) / 0.75


def draw(size: int, card_scale: float) -> bytes:
    rows = []
    s = 4  # samples per pixel side
    w, h = 0.62 * card_scale * size, 0.84 * card_scale * size
    spade = 0.26 * card_scale * size
    for py in range(size):
        row = bytearray([0])
        for px in range(size):
            acc = [0, 0, 0]
            for sy in range(s):
                for sx in range(s):
                    x = px + (sx + 0.5) / s - size / 2
                    y = py + (sy + 0.5) / s - size / 2
                    colour = FELT
                    if _inside_card(x, y, w, h, 0.08 * size * card_scale):
                        colour = INK if _inside_spade(x / spade, y / spade) else CARD
                    for i in range(3):
                        acc[i] += colour[i]
            row += bytes(round(a / (s * s)) for a in acc)
        rows.append(bytes(row))
    return _png(size, b"".join(rows))


def _png(size: int, raw: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, size, scale in (
        ("icon-192.png", 192, 1.0),
        ("icon-512.png", 512, 1.0),
        ("icon-maskable-512.png", 512, 0.78),
    ):
        (OUT / name).write_bytes(draw(size, scale))
        print(OUT / name)


if __name__ == "__main__":
    main()
