"""A small PNG decoder (8-bit greyscale, RGB, RGBA; non-interlaced): enough to count drawn pixels in a
Chromium screenshot without an imaging library."""

from __future__ import annotations

import struct
import zlib

CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode(data: bytes) -> tuple[int, int, int, list[bytearray]]:
    """Returns (width, height, channels, rows of raw samples)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat = 8, bytearray()
    width = height = depth = colour = interlace = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    if depth != 8 or colour not in CHANNELS or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
    bpp = CHANNELS[colour]
    raw = zlib.decompress(bytes(idat))
    stride = width * bpp
    rows: list[bytearray] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        ftype = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xFF
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xFF
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif ftype == 4:
                line[i] = (line[i] + _paeth(a, b, c)) & 0xFF
        rows.append(line)
        prev = line
    return width, height, bpp, rows


Image = tuple[int, int, int, list[bytearray]]


def coloured_pixels(
    png: bytes | Image, region: tuple[int, int, int, int] | None = None, step: int = 1
) -> tuple[int, int]:
    """(pixels that are clearly coloured — not white, grey or black —, pixels that are not white)
    inside ``region`` = (x0, y0, x1, y1), looking at every ``step``-th pixel in both directions.
    Takes the PNG's bytes or an image already decoded, to count several regions of one screenshot."""
    width, height, bpp, rows = decode(png) if isinstance(png, bytes) else png
    x0, y0, x1, y1 = region or (0, 0, width, height)
    colourful = non_white = 0
    for y in range(y0, min(y1, height), step):
        row = rows[y]
        for x in range(x0, min(x1, width), step):
            px = row[x * bpp : x * bpp + min(bpp, 3)]
            if bpp < 3:
                if px[0] < 245:
                    non_white += 1
                continue
            r, g, b = px[0], px[1], px[2]
            if min(r, g, b) < 245:
                non_white += 1
            if max(r, g, b) - min(r, g, b) > 40:
                colourful += 1
    return colourful, non_white
