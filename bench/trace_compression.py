#!/usr/bin/env python3
"""What each zlib level would give on a real, uncompressed gpunoise trace.

Cuts the trace's packets into blocks the way TraceFileWriter does (whole
packets, a block sealed before it would pass --block bytes) and deflates
every block at each level with the system's zlib (the library the recorder
links), timing the CPU it takes. Prints per level: bytes written, size
against the plain file, and CPU per MiB of packets; the ratios between
levels are what to compare (one process, one run).

  sudo gpunoise record -d 10 --compress none -o plain.pftrace  # with the load running
  bench/trace_compression.py plain.pftrace
"""

import argparse
import sys
import time
import zlib


def read_varint(data, pos):
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError(f"truncated varint at byte {pos}")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError(f"varint too long at byte {pos}")


def framed_packets(data):
    """Each framed Trace.packet field of `data`, framing included."""
    pos = 0
    while pos < len(data):
        start = pos
        tag, pos = read_varint(data, pos)
        if tag != (1 << 3) | 2:
            raise ValueError(f"byte {start}: not a trace packet (tag {tag})")
        length, pos = read_varint(data, pos)
        payload_start = pos
        pos += length
        if pos > len(data):
            raise ValueError(f"byte {start}: packet runs past the end of the file")
        if data[payload_start:payload_start + 2] == b"\x92\x03":  # field 50: already compressed
            raise ValueError("the trace already holds compressed blocks: record with --compress none")
        yield data[start:pos]


def blocks(data, block_bytes):
    block = bytearray()
    for packet in framed_packets(data):
        if block and len(block) + len(packet) > block_bytes:
            yield bytes(block)
            block.clear()
        block += packet
    if block:
        yield bytes(block)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", help="an uncompressed trace (gpunoise record --compress none)")
    ap.add_argument("--block", type=int, default=256 << 10, help="block size before compression (default 256 KiB)")
    ap.add_argument("--levels", default="1,3,6,9", help="zlib levels to try (default 1,3,6,9)")
    ap.add_argument("--repeat", type=int, default=3, help="passes per level; the fastest counts (default 3)")
    args = ap.parse_args(argv)
    try:
        levels = [int(x) for x in args.levels.split(",")]
    except ValueError:
        ap.error("--levels takes numbers, e.g. 1,6")
    if any(not 1 <= lv <= 9 for lv in levels) or args.block < 1 or args.repeat < 1:
        ap.error("levels are 1 to 9; --block and --repeat are positive")
    try:
        with open(args.trace, "rb") as f:
            data = f.read()
        cut = list(blocks(data, args.block))
    except (OSError, ValueError) as e:
        print(f"trace_compression: failed to read {args.trace}: {e}", file=sys.stderr)
        return 1
    mib = len(data) / (1 << 20)
    print(f"{args.trace}: {len(data)} bytes, {len(cut)} blocks of at most {args.block} bytes")
    print(f"{'level':>5} {'bytes':>12} {'of plain':>9} {'CPU ms/MiB':>11}")
    for level in levels:
        best = None
        for _ in range(args.repeat):
            t0 = time.process_time()
            # Each block becomes a TracePacket (2-byte tag + length) framed as
            # a Trace.packet (1-byte tag + length): ~8 bytes of framing.
            out = sum(len(zlib.compress(b, level)) + 8 for b in cut)
            spent = time.process_time() - t0
            best = spent if best is None else min(best, spent)
        print(f"{level:>5} {out:>12} {out / len(data):>9.3f} {best * 1000 / mib:>11.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
