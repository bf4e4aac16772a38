#!/usr/bin/env python3
"""Make the adversarial reading shapes of issue 18 (bounded reading), reproducibly.

Every shape is written deterministically (no randomness), so two runs give the same
bytes. The gzip bombs are single-member gzip streams written chunk by chunk, so nothing
large is held in memory while generating them.

    python3 scripts/hostile_shapes.py OUT_DIR [SHAPE ...]

Shapes (default: all):

| shape                 | file                          | what                                        |
|-----------------------|-------------------------------|---------------------------------------------|
| names                 | names.json                    | 3 M events, every name distinct (~270 MB)   |
| threads               | threads.json                  | 3 M events, every thread distinct (~265 MB) |
| tiny                  | tiny.json                     | 10 M tiny events (~860 MB)                  |
| name500m              | name500m.json                 | one event whose name is 500 MiB             |
| unknown_before        | unknown_before.json.gz        | 256 Mi-element array under an unknown key before `traceEvents` |
| unknown_after         | unknown_after.json.gz         | the same array after `traceEvents`          |
| ws_after              | ws_after.json.gz              | 4 GiB of whitespace after the event array   |
| ws_inside             | ws_inside.json.gz             | 5 GiB of whitespace inside one event        |
| name2g                | name2g.json.gz                | one event whose name is 2 GiB               |
| tiny10g               | tiny10g.json.gz               | 10 GiB of small events (~107 M)             |
| min_events            | min_events.json               | 10 M of the smallest events (~180 MB)       |
| min_tracks            | min_tracks.json               | 3 M smallest events, each on its own track  |
| min_names             | min_names.json                | 5 M smallest events, each with its own name |

`kinetoscope summary FILE` is then measured on each with `/usr/bin/time -v`
(`scripts/hostile_measure.sh`).
"""

import gzip
import os
import sys

MiB = 1 << 20
GiB = 1 << 30
CHUNK = 8 * MiB

EVENT = b'{"ph":"X","cat":"cpu_op","name":"%s","pid":1,"tid":%d,"ts":%d,"dur":1}'



def events(n, name, tid):
    """Yield the byte chunks of n small events (name(i) and tid(i) vary per shape)."""
    buf = []
    size = 0
    for i in range(n):
        ev = EVENT % (name(i), tid(i), 1_000_000 + i)
        if i:
            ev = b",\n" + ev
        buf.append(ev)
        size += len(ev)
        if size >= CHUNK:
            yield b"".join(buf)
            buf, size = [], 0
    if buf:
        yield b"".join(buf)


def repeat(unit, total):
    """Yield `total` bytes of `unit` repeated, in chunks."""
    block = unit * (CHUNK // len(unit))
    left = total
    while left > 0:
        part = block[: min(left, len(block))]
        left -= len(part)
        yield part


def array(elements):
    """Yield a JSON array of `elements` zeros: `[0,0,...,0]`."""
    yield b"["
    yield from repeat(b"0,", 2 * (elements - 1))
    yield b"0]"


def one_event(name_bytes=0, inner_ws=0):
    """Yield one event with a name of `name_bytes` bytes or `inner_ws` bytes of
    whitespace between two of its keys."""
    yield b'{"ph": "X", "cat": "cpu_op", "name": "'
    if name_bytes:
        yield from repeat(b"a", name_bytes)
    else:
        yield b"op"
    yield b'",'
    yield from repeat(b" ", inner_ws)
    yield b'"pid": 1, "tid": 1, "ts": 1000, "dur": 1}'


def small_event():
    yield b'{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 1000, "dur": 5}'


def small_events(total):
    """About `total` bytes of small events: one block of events repeated."""
    block = b"".join(events(80_000, lambda i: b"aten::add", lambda i: 1))
    written = 0
    while written + len(block) < total:
        if written:
            yield b",\n"
        yield block
        written += len(block)


def minimal(n, extra):
    """The smallest events that still make an event row: `{"ph":"i","ts":1}` plus
    `extra(i)`, with no whitespace."""
    yield b'{"traceEvents":['
    for start in range(0, n, 100_000):
        end = min(n, start + 100_000)
        part = b",".join(b'{"ph":"i","ts":1%s}' % extra(i) for i in range(start, end))
        yield (b"," if start else b"") + part
    yield b"]}"


def trace(body, before=(), after=()):
    """The chunks of a trace: optional keys before, the event array, optional keys after."""
    yield b"{"
    yield from before
    yield b'"traceEvents": [\n'
    yield from body
    yield b"\n]"
    yield from after
    yield b"}\n"


def unknown(key, first):
    """An unknown key holding a 256 Mi-element array, as a member before or after."""
    if first:
        yield b'"%s": ' % key
        yield from array(256 * MiB)
        yield b", "
    else:
        yield b', "%s": ' % key
        yield from array(256 * MiB)


SHAPES = {
    "names": (
        "names.json",
        lambda: trace(events(3_000_000, lambda i: b"op_%08d" % i, lambda i: 1)),
    ),
    "threads": (
        "threads.json",
        lambda: trace(events(3_000_000, lambda i: b"aten::add", lambda i: 1000 + i)),
    ),
    "tiny": (
        "tiny.json",
        lambda: trace(events(10_000_000, lambda i: b"aten::add", lambda i: 1)),
    ),
    "name500m": ("name500m.json", lambda: trace(one_event(name_bytes=500 * MiB))),
    "unknown_before": (
        "unknown_before.json.gz",
        lambda: trace(small_event(), before=unknown(b"junk", True)),
    ),
    "unknown_after": (
        "unknown_after.json.gz",
        lambda: trace(small_event(), after=unknown(b"junk", False)),
    ),
    "ws_after": (
        "ws_after.json.gz",
        lambda: trace(small_event(), after=repeat(b" ", 4 * GiB)),
    ),
    "ws_inside": ("ws_inside.json.gz", lambda: trace(one_event(inner_ws=5 * GiB))),
    "name2g": ("name2g.json.gz", lambda: trace(one_event(name_bytes=2 * GiB))),
    "tiny10g": ("tiny10g.json.gz", lambda: trace(small_events(10 * GiB))),
    "min_events": ("min_events.json", lambda: minimal(10_000_000, lambda i: b"")),
    "min_tracks": ("min_tracks.json", lambda: minimal(3_000_000, lambda i: b',"tid":%d' % i)),
    "min_names": ("min_names.json", lambda: minimal(5_000_000, lambda i: b',"name":"%x"' % i)),
}


def write(path, chunks):
    tmp = path + ".tmp"
    if path.endswith(".gz"):
        # mtime=0 and no file name: the same bytes every run.
        with open(tmp, "wb") as raw, gzip.GzipFile(
            filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0
        ) as out:
            for c in chunks:
                out.write(c)
    else:
        with open(tmp, "wb") as out:
            for c in chunks:
                out.write(c)
    os.replace(tmp, path)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for shape in sys.argv[2:] or list(SHAPES):
        name, make = SHAPES[shape]
        path = os.path.join(out, name)
        write(path, make())
        print(f"{path}: {os.path.getsize(path)} bytes", flush=True)


if __name__ == "__main__":
    main()
