"""Type stubs of the report (docs/report-schema.md), so that editors complete `r.waf.waf`."""

from collections.abc import Iterator, Mapping
from typing import Any

class Section:
    """A part of a report: fields as attributes (or items), nested parts as sections."""

    def __getattr__(self, name: str) -> Any: ...
    def __getitem__(self, key: str) -> Any: ...
    def __contains__(self, key: object) -> bool: ...
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...
    def keys(self) -> list[str]: ...
    def to_dict(self) -> dict[str, Any]: ...

class Latency(Section):
    count: int
    mean: float
    min: int
    p50: int
    p90: int
    p99: int
    p999: int
    p9999: int
    max: int

class OpReport(Section):
    count: int
    iops: float
    mb_per_s: float
    bytes: int
    errors: int
    latency_ns: Latency
    phases_ns: Section
    phases_p50_ns: Section
    phases_p99_ns: Section
    latency_cdf_ns: list[list[float]]

class Throughput(Section):
    count: int
    iops: float
    mb_per_s: float

class FlowReport(Section):
    """One flow: a job with all its clones, or a trace replay (docs/report-schema.md, `flows`)."""

    name: str
    queues: list[int]
    window_ns: int
    ops: Mapping[str, OpReport]
    total: Throughput
    alone_latency_mean_ns: float | None
    slowdown: float | None
    cache: FlowCache | None
    cmt: FlowCmt | None
    flash: FlowFlash | None

class FlowFlash(Section):
    """Flash transactions one flow caused, or no flow (docs/report-schema.md, `flows[].flash`)."""

    reads: int
    programs: int
    erases: int
    by_source: list[int]
    gc_reads: int
    gc_programs: int
    read_bytes: int
    program_bytes: int

class FlowCache(Section):
    """A flow's data-cache partition (docs/report-schema.md, `flows[].cache`)."""

    lines: int
    read_hits: int
    read_misses: int
    read_hit_ratio: float | None

class FlowCmt(Section):
    """A flow's lookups of the CMT and its CMT partition (docs/report-schema.md, `flows[].cmt`)."""

    segments: int | None
    hits: int
    misses: int
    hit_ratio: float | None

class VolumeLayout(Section):
    """Where one volume of a replayed trace went (docs/report-schema.md, `replay.layout`)."""

    volume: int
    requests: int
    footprint: int
    base: int
    size: int
    flow: str | None
    queue: int | None
    pid: int | None
    priority: str | None

class LayoutReport(Section):
    """How a replay laid a trace's volumes out and which flows they made."""

    kind: str
    scale: float
    folded_volumes: int
    flows: int
    queues: int
    volumes: list[VolumeLayout]

class ReplayReport(Section):
    """What a trace replay did to the trace (docs/report-schema.md, `replay`)."""

    file: str
    format: str
    compression: str
    mode: str
    align: str
    records: int
    commands: int
    skipped_flushes: int
    skipped_zero_length: int
    dropped: int
    bad_lines_skipped: int
    folded: int
    widened: int
    split: int
    clipped: int
    chunked: int
    out_of_order: int
    host_stalls: int
    lag_mean_us: float
    lag_p99_us: float
    lag_max_us: float
    volumes: Mapping[str, Section]
    layout: LayoutReport | None

class Waf(Section):
    host_units: int
    flash_units: list[int]
    waf: float
    data_waf: float

class Gc(Section):
    invocations: int
    units_moved: int
    blocks_erased: int
    foreground_waits: int
    wl_migrations: int
    free_blocks: int
    victims_in_progress: int
    units_moved_in_progress: int

class Wear(Section):
    min: int
    mean: float
    max: int
    stddev: float
    histogram: list[int]

class HitRatio(Section):
    hits: int
    misses: int
    ratio: float

class Cache(Section):
    data: HitRatio
    mapping: HitRatio | None
    dirty_units: int

class Dram(Section):
    capacity_bytes: int
    data_cache_bytes: int
    mapping_bytes: int
    pending_budget_bytes: int
    pending_high_bytes: int
    gc_tpage_writes: int
    other_bytes: int

class Ecc(Section):
    pages_checked: int
    clean_reads: int
    corrected_reads: int
    retried_reads: int
    uncorrectable_reads: int
    codewords_corrected: int
    bits_corrected: int
    decode_cycles: int
    by_attempt: list[int]
    codewords_checked: int
    bits_checked: int
    bits_observed: int
    codewords_failed: int
    errors_per_codeword: list[int]
    data_bits_read: int
    units_uncorrectable: int
    internal_reads: int
    busy_ns: int
    rber: float
    uber: float

class Media(Section):
    program_failures: int
    erase_failures: int
    grown_bad_blocks: int
    units_relocated: int
    min_spare_blocks: int | None
    read_only_at: int | None
    unmovable_pages: int
    unreadable_tpages: int
    refresh_scans: int
    blocks_refreshed: int
    units_refreshed: int

class ZoneStats(Section):
    resets: int
    reset_erases: int
    reset_ns: int
    reset_dropped_units: int
    finishes: int
    finish_pad_units: int
    flush_pad_pages: int
    stuck_pages: int
    recovered_dropped_units: int

class Zones(Section):
    zones: int
    zone_size: int
    zone_capacity: int
    by_state: list[int]
    stats: ZoneStats

class Utilisation(Section):
    channels: list[float]
    dies: list[float]
    cores: list[Section]

class Flash(Section):
    reads: int
    programs: int
    erases: int
    by_source: list[int]
    mean_read_ns: float
    mean_program_ns: float
    die_programs: list[int]
    die_reads: list[int]
    die_erases: list[int]

class Link(Section):
    to_device: int
    to_host: int

class Energy(Section):
    """Joules (or watts) per component."""

    nand: float
    channels: float
    controller: float
    dram: float
    link: float
    host_cpu: float
    host_dram: float

class EnergyReport(Section):
    joules: Energy
    total_j: float
    device_j: float
    host_j: float
    mean_w: Energy
    device_w: float
    host_w: float
    joules_per_io: float

class PowerSeries(Section):
    """Watts per interval by component."""

    nand: list[float]
    channels: list[float]
    controller: list[float]
    dram: list[float]
    link: list[float]
    host_cpu: list[float]
    host_dram: list[float]
    device: list[float]
    total: list[float]

class HostReport(Section):
    """Host CPU and memory of a host-side FTL or a bridge's driver."""

    cores: int
    cpu_busy: float
    memory_bytes: int
    peak_memory_bytes: int
    memory_by_use: Mapping[str, int]

class TimeSeries(Section):
    interval_ns: int
    t_ms: list[float]
    read_iops: list[float]
    write_iops: list[float]
    iops: list[float]
    mb_per_s: list[float]
    latency_mean_us: list[float | None]
    latency_p99_us: list[float | None]
    waf: list[float | None]
    free_blocks: list[int]
    gc_units_moved: list[int]
    erases: list[int]
    power_w: PowerSeries
    host_memory_mib: list[float]
    host_cpu: list[float]
    ecc_reads: list[int]
    ecc_corrected: list[int]
    ecc_retried: list[int]
    ecc_uncorrectable: list[int]
    rber: list[float | None]
    ecc_busy: list[float]
    pe_mean: list[float]

class LockReport(Section):
    # The lock class (`cache line`, ...) is `lock["class"]`: `class` is a Python keyword.
    acquisitions: int
    contended_share: float
    mean_wait_ns: float
    p99_wait_ns: int
    held_ns: int

class QueueReport(Section):
    name: str
    items: int
    mean_occupancy: float
    max_occupancy: int
    mean_wait_ns: float

class WaitListReport(Section):
    waited: int
    mean_ns: float
    p99_ns: int

class Architecture(Section):
    """The firmware architecture's locks, stage queues and wait list."""

    name: str
    locks: list[LockReport]
    queues: list[QueueReport]
    wait_list: WaitListReport | None

class FdpHandle(Section):
    """One reclaim unit handle's data (docs/report-schema.md, `fdp`)."""

    handle: int
    host_bytes: int
    user_bytes: int
    gc_bytes: int
    media_bytes: int
    waf: float | None
    reclaim_units: int

class FdpReport(Section):
    """Flexible Data Placement per reclaim unit handle (docs/fdp.md)."""

    handles: int
    reclaim_groups: int
    isolation: str
    ru_bytes: int
    per_handle: list[FdpHandle]
    host_bytes: int
    media_bytes: int
    erased_bytes: int
    waf: float
    ruh_updates: int
    invalid_pids: int

class Report(Section):
    """A run's report (schema `ssdlab.report/1`, documented in docs/report-schema.md)."""

    schema: str
    ssdlab_version: str
    seed: int
    device: Section
    workload: list[Section]
    initial_state: str
    sim_time_ns: int
    window_start_ns: int
    window_ns: int
    wall_time_s: float
    requests_per_wall_sec: float
    ops: Mapping[str, OpReport]
    total: Throughput
    flows: list[FlowReport]
    fairness: float | None
    flows_unattributed: FlowFlash | None
    waf: Waf
    gc: Gc
    wear: Wear
    cache: Cache
    dram: Dram
    ecc: Ecc
    media: Media
    zones: Zones | None
    utilisation: Utilisation
    flash: Flash
    link: Link
    smart: Section
    timeseries: TimeSeries
    replay: ReplayReport | None
    live: Section | None
    energy: EnergyReport
    host_interface: str
    host_stack: HostReport | None
    architecture: Architecture
    fdp: FdpReport | None
