"""The one thing `perf report --stats` does not say: how many samples perf's
LOST and LOST_SAMPLES records say were lost (it counts the records). Read
from perf.data itself (tools/perf/Documentation/perf.data-file-format.txt):
a header with the data section's offset and size, then records that each
start with struct perf_event_header {u32 type; u16 misc; u16 size}."""

import struct

PERF_MAGIC = b"PERFILE2"
PERF_RECORD_LOST = 2           # {u64 id; u64 lost; ...}
PERF_RECORD_LOST_SAMPLES = 13  # {u64 lost; ...}
PERF_RECORD_HEADER = struct.Struct("<IHH")


class PerfDataError(Exception):
    pass


def data_section(f):
    header = f.read(104)
    if len(header) < 104 or header[:8] != PERF_MAGIC:
        raise PerfDataError("not a perf.data file (PERFILE2)")
    # magic, size, attr_size, attrs{offset,size}, data{offset,size}, ...
    offset, size = struct.unpack_from("<QQ", header, 40)
    return offset, size


def lost_samples(path):
    """Samples perf lost, summed over LOST and LOST_SAMPLES records."""
    lost = 0
    with open(path, "rb") as f:
        offset, size = data_section(f)
        f.seek(offset)
        data = f.read(size)
    pos = 0
    while pos + PERF_RECORD_HEADER.size <= len(data):
        rtype, _misc, rsize = PERF_RECORD_HEADER.unpack_from(data, pos)
        if rsize < PERF_RECORD_HEADER.size:
            raise PerfDataError(f"malformed record at data offset {pos}")
        if rtype == PERF_RECORD_LOST:
            lost += struct.unpack_from("<Q", data, pos + 16)[0]
        elif rtype == PERF_RECORD_LOST_SAMPLES:
            lost += struct.unpack_from("<Q", data, pos + 8)[0]
        pos += rsize
    return lost
