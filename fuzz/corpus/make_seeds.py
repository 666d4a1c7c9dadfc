#!/usr/bin/env python3
"""Writes the binary seeds of the fuzz targets whose input is a memory
image (the layouts of protocol/mri_protocol.h, little-endian, and the input
formats the targets' comments describe): histogram_layout, segment_header,
plan, libmri_readers and launch. The text targets' seeds are plain files. Run from anywhere:
    fuzz/corpus/make_seeds.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC = 0x314D48535F49524D  # "MRI_SHM1"
VERSION = 13  # MRI_PROTOCOL_VERSION
HEADER_BYTES = 1152  # sizeof(proto::Header)


def write(target, name, data):
    os.makedirs(os.path.join(HERE, target), exist_ok=True)
    with open(os.path.join(HERE, target, name), "wb") as f:
        f.write(data)


def data_record(address, size, name_offset=0, name_len=1, file_id=0, line=0):
    return struct.pack("<QQIIIi", address, size, name_offset, name_len, file_id, line)


def histograms():
    two = data_record(0x1000, 800) + data_record(0x8000, 8)
    write("histogram_layout", "one_of_two", struct.pack("<II", 1, 16) + two)
    write("histogram_layout", "all_of_two", struct.pack("<II", 0, 7) + two)
    write("histogram_layout", "more_bins_than_bytes", struct.pack("<II", 0, 1024) + data_record(0x10, 3))
    write("histogram_layout", "same_address", struct.pack("<II", 0, 5) + data_record(0x40, 64) * 3)
    write("histogram_layout", "largest", struct.pack("<II", 0, 1023) + data_record(0, 1 << 56) * 2)
    write("histogram_layout", "negative_size", struct.pack("<II", 1, 52) + data_record(0x601040, 2**64 - 0x601040))
    write("histogram_layout", "index_beyond", struct.pack("<II", 3, 4) + two)


def geometry(regions, threads, requests, slices, files, pool, ring, edges):
    return struct.pack("<8I", regions, threads, requests, slices, files, pool, ring, edges)


DEFAULT = geometry(4096, 128, 256, 4, 1024, 1 << 20, 1 << 16, 4096)
SMALL = geometry(1, 1, 1, 1, 1, 1, 0, 0)
LARGEST = geometry(1 << 16, 1024, 1024, 16, 1 << 14, 16 << 20, 1 << 24, 1 << 16)


def header(geo, version=VERSION, header_size=HEADER_BYTES, segment_size=1 << 40, tool_pid=4242):
    head = (struct.pack("<QIIQ", MAGIC, version, header_size, segment_size) + geo).ljust(64, b"\0")
    tool = struct.pack("<IIiII", 0, 0, -1, tool_pid, 0).ljust(64, b"\0")
    return (head + tool).ljust(HEADER_BYTES, b"\0")


def headers():
    # A segment of 2^40 bytes holds every valid geometry's layout.
    big = 1 << 40
    write("segment_header", "default", header(DEFAULT) + struct.pack("<Qq", big, 4242))
    write("segment_header", "smallest", header(SMALL) + struct.pack("<Qq", big, 4242))
    write("segment_header", "largest", header(LARGEST) + struct.pack("<Qq", big, 4242))
    write("segment_header", "other_version", header(DEFAULT, version=77) + struct.pack("<Qq", big, 4242))
    write("segment_header", "too_small", header(DEFAULT, segment_size=1 << 20) + struct.pack("<Qq", 1 << 20, 4242))
    write("segment_header", "other_tool", header(DEFAULT) + struct.pack("<Qq", big, 4243))
    write("segment_header", "ring_not_power_of_two",
          header(geometry(64, 2, 4, 1, 1, 64, 3, 0)) + struct.pack("<Qq", big, 4242))


ACTIVE = 1
AGGREGATE, HISTOGRAM, TRACE, PROFILE = 0, 1, 2, 3
TIME, INSTANCES, COUNTER, REGION_EVENT, CACHE_EVENT = 0, 1, 2, 3, 4
ALL_REGIONS, PAUSED, THREAD_FILTER, NO_SUBREGIONS, CALLPATH, NO_COMPENSATION, UNWIND = (1 << b for b in range(7))


def request(kind, metric, flags=0, slice_=0, generation=1, event=b"", state=ACTIVE):
    return struct.pack("<8I", state, generation, kind, metric, slice_, flags, 0, 0) + event.ljust(64, b"\0")


def plan_input(control, records, acks=b"", masks=b"", bitmaps=b""):
    # The target lays the bytes over max_requests records, acks, masks and
    # bitmaps in turn: pad each part to its geometry's size.
    requests = 1 + control[3] % 64
    regions = 1 + (control[0] | control[1] << 8) % 4096
    words = (regions + 63) // 64
    return (bytes(control) + records.ljust(requests * 96, b"\0") + acks.ljust(requests * 8, b"\0") +
            masks.ljust(requests * 16 * 8, b"\0") + bitmaps.ljust(requests * words * 8, b"\0"))


def plans():
    # regions 64 (max 64, all published), 2 threads, 8 requests, 4 slices
    # with 8 edges, a ring of 16 records.
    control = [63, 0, 1, 7, 3 | 2 << 4, 4, 255, 2 | 0x80]
    every = request(AGGREGATE, TIME, ALL_REGIONS)
    some = request(PROFILE, INSTANCES, CALLPATH | UNWIND, slice_=2)
    trace = request(TRACE, REGION_EVENT, THREAD_FILTER | NO_SUBREGIONS)
    counters = request(AGGREGATE, COUNTER, event=b"perf::TASK-CLOCK") + request(PROFILE, COUNTER, slice_=1,
                                                                                event=b"PAPI_TOT_INS")
    cache = request(HISTOGRAM, CACHE_EVENT)
    bitmaps = struct.pack("<Q", 0b1011) * 8
    masks = struct.pack("<QQ", 1, 0) * 8
    write("plan", "every_kind", plan_input(control, every + some + trace + counters + cache, masks=masks,
                                           bitmaps=bitmaps))
    acks = struct.pack("<II", 1, 0) + struct.pack("<II", 1, 1)
    write("plan", "acked_before", plan_input(control, every + every, acks=acks))
    nine = b"".join(request(AGGREGATE, COUNTER, event=b"e%d" % i) for i in range(9))
    write("plan", "nine_counter_events", plan_input([255, 0, 0, 15, 0, 0, 255, 1], nine))
    slices = b"".join(request(PROFILE, TIME, slice_=s % 2) for s in range(4))
    write("plan", "one_slice_twice", plan_input([255, 0, 0, 7, 1, 0, 255, 1], slices))
    traces = b"".join(request(TRACE, TIME if i % 2 else REGION_EVENT, ALL_REGIONS) for i in range(10))
    write("plan", "more_traces_than_slots", plan_input([63, 0, 1, 15, 0, 4, 255, 2], traces))
    write("plan", "no_ring", plan_input([63, 0, 1, 3, 0, 11, 255, 2], trace))
    write("plan", "bad_kind_and_metric", plan_input([63, 0, 1, 3, 0, 4, 128, 2],
                                                     request(99, TIME) + request(AGGREGATE, 77) +
                                                     request(HISTOGRAM, TIME) + request(AGGREGATE, REGION_EVENT)))


# libmri_readers: 4 bytes (ring size 2^(b0 % 7) records; b1 bit 0: the
# program ended, bit 1: records of EXECUTION_TIME; b2-b3 histogram bins),
# then patches (area, u16 offset, length, bytes) over the baseline the
# target publishes. Areas, in fuzz_libmri_readers.cpp's order:
APP, REGIONS, FILES, STRINGS, AGGREGATES, PROFILES, EDGES, HEADS, TAILS, RINGS, DATA, HIST_HEADS, HISTOGRAMS = range(13)


def patch(area, offset, data):
    return struct.pack("<BHB", area, offset, len(data)) + data


def trace_record(timestamp, data, region, kind, request):
    return struct.pack("<QQIHH", timestamp, data, region, kind, request)


def readers():
    params = bytes([4, 2, 16, 0])  # 16 records a ring, EXECUTION_TIME, 16 bins
    write("libmri_readers", "baseline", params)
    records = (trace_record(100, 0, 0, 0, 0) + trace_record(150, 0, 1, 0, 1) + trace_record(180, 30, 1, 2, 1) +
               trace_record(200, 1, 7, 1, 0) + trace_record(2**64 - 1, 2**64 - 1, 2**32 - 1, 9, 2**16 - 1))
    write("libmri_readers", "ring_of_five", params + patch(HEADS, 0, struct.pack("<Q", 5)) +
          patch(RINGS, 0, records))
    write("libmri_readers", "ring_wrapped", params + patch(HEADS, 0, struct.pack("<Q", 20)) +
          patch(TAILS, 0, struct.pack("<Q", 12)) + patch(RINGS, 0, records[:96]))
    write("libmri_readers", "head_beyond_ring", params + patch(HEADS, 64, struct.pack("<Q", 100)))
    write("libmri_readers", "head_behind_tail", bytes([4, 3, 16, 0]) + patch(TAILS, 0, struct.pack("<Q", 9)))
    write("libmri_readers", "row_left_odd", params + patch(AGGREGATES, 0, struct.pack("<I", 7)))
    edge = struct.pack("<IIQQQQQ", 0, 1, 3, 300, 200, 290, 190) + bytes(16)
    write("libmri_readers", "edges", params + patch(EDGES, 0, edge) + patch(EDGES, 64, struct.pack("<II", 7, 100)))
    write("libmri_readers", "bad_region_type", params + patch(REGIONS, 0, struct.pack("<I", 99)))
    write("libmri_readers", "thread_count_huge", params + patch(APP, 0, struct.pack("<IIII", *([2**32 - 1] * 4))))


def launches():
    """fuzz_launch.cpp: the values of OMPI_COMM_WORLD_RANK, _SIZE,
    _LOCAL_RANK and PMIX_RANK (b"\x01": unset), then a command line; NUL
    between pieces."""
    unset = b"\x01"

    def seed(name, values, argv):
        write("launch", name, b"\0".join(list(values) + list(argv)))

    seed("open_mpi_job", [b"3", b"16", b"1", b"3"], [b"mpirun", b"-np", b"4", b"/bin/true", b"a b"])
    seed("pmix_rank_only", [unset, unset, unset, b"7"], [b"srun", b"--weird", b"x"])
    seed("malformed_rank", [b"x", b"4", unset, unset], [b"mpiexec", b"--mca", b"btl", b"self", b"--", b"/bin/true"])
    seed("rank_not_below_size", [b"4", b"4", unset, unset], [])
    seed("long_value", [b"7" * 100, unset, unset, unset], [b"mpirun.openmpi", b"-x", b"A=1", b"true", b"it's"])


histograms()
headers()
plans()
readers()
launches()
