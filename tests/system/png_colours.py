#!/usr/bin/python3
"""Counts pixels of a PNG (8-bit RGB or RGBA, not interlaced) with the
Python standard library only: prints the image size, the pixels that are not
near-white, and, for each #rrggbb given, the pixels within 16 of it per
channel. usage: png_colours.py FILE.png [#rrggbb ...]"""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG file")
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                sys.exit(f"{path}: depth {depth}, colour type {ctype}, interlace {interlace}: "
                         "expected 8-bit RGB or RGBA, not interlaced")
            channels = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        rows.append(line)
        prev = line
    return width, height, channels, rows


def main():
    width, height, channels, rows = pixels(sys.argv[1])
    targets = [tuple(int(h[i:i + 2], 16) for i in (1, 3, 5)) for h in sys.argv[2:]]
    counts = [0] * len(targets)
    ink = 0
    for line in rows:
        for x in range(0, len(line), channels):
            r, g, b = line[x], line[x + 1], line[x + 2]
            if min(r, g, b) < 235:
                ink += 1
            for k, (tr, tg, tb) in enumerate(targets):
                if abs(r - tr) <= 16 and abs(g - tg) <= 16 and abs(b - tb) <= 16:
                    counts[k] += 1
    print(width, height, ink, *counts)


main()
