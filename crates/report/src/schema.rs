//! The report structures (serialised as the JSON report).

use std::collections::BTreeMap;

use firmware::config::DeviceConfig;
use firmware::hil::SmartLog;
use firmware::trace::Phases;
use host::workload::JobSpec;
use serde::{Deserialize, Serialize};
use sim::stats::Summary;

use crate::resources::{EnergyReport, HostReport, PowerSeries};

/// The schema identifier written into every report.
pub const SCHEMA: &str = "ssdlab.report/1";

/// A run's full report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The ssdlab version that produced it.
    pub ssdlab_version: String,
    /// The seed of the run.
    pub seed: u64,
    /// The device, fully resolved.
    pub device: DeviceConfig,
    /// The jobs run.
    pub workload: Vec<JobSpec>,
    /// The device's state before the run: `fresh`, a preconditioning (`steady-state:2, fast
    /// path`), or the snapshot it started from.
    pub initial_state: String,
    /// Simulated time of the whole run, ns.
    pub sim_time_ns: u64,
    /// Start and length of the measured window (after ramp time), ns.
    pub window_start_ns: u64,
    /// Length of the measured window, ns.
    pub window_ns: u64,
    /// Wall-clock time of the simulation, seconds (differs between runs).
    pub wall_time_s: f64,
    /// Host commands simulated per wall-clock second (differs between runs).
    pub requests_per_wall_sec: f64,
    /// Per direction (`read`, `write`, `trim`), only those that ran.
    pub ops: BTreeMap<String, OpReport>,
    /// Every direction together.
    pub total: Throughput,
    /// The same by flow: one per job (all its clones), in the order of the jobs, or one for a
    /// trace replay; empty for `ssdlab serve`. Each command counts in its flow and above.
    #[serde(default)]
    pub flows: Vec<FlowReport>,
    /// With `--alone`: the fairness index, the flows' least slowdown over their greatest
    /// (1: every flow suffers alike; MQSim's FAST'18 definition); `None` without it.
    #[serde(default)]
    pub fairness: Option<f64>,
    /// With more than one flow: the flash transactions no flow caused (GC of blocks no flow
    /// wrote, such as the preconditioning's; translation pages; wear levelling, refresh,
    /// relocation); with `flows[].flash` they add up to `flash` (absent with one flow;
    /// docs/multi-tenant.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows_unattributed: Option<FlowFlash>,
    /// Write amplification.
    pub waf: WafReport,
    /// Garbage collection and wear levelling.
    pub gc: GcReport,
    /// Erase counts over good blocks.
    pub wear: WearReport,
    /// Hit ratios.
    pub cache: CacheReport,
    /// The controller's DRAM by use, and what GC's pending mapping updates took of theirs.
    #[serde(default)]
    pub dram: DramReport,
    /// Bit errors, their correction and read retries on host reads (all zero when no bit
    /// errors are configured; `docs/errors.md`).
    #[serde(default)]
    pub ecc: EccReport,
    /// Bad-block management and data refresh: failed programs and erases, grown bad blocks,
    /// spares, end of life, refresh (all zero without the error model; `docs/errors.md`).
    #[serde(default)]
    pub media: firmware::ftl::MediaStats,
    /// A zoned namespace's zones: by state, resets and their time, padding (`None`:
    /// conventional, and in reports older than this field).
    #[serde(default)]
    pub zones: Option<firmware::ftl::zoned::ZoneReport>,
    /// Busy fractions.
    pub utilisation: Utilisation,
    /// Flash transactions.
    pub flash: FlashReport,
    /// Bytes over the host link.
    pub link: LinkReport,
    /// The SMART / health log at the end.
    pub smart: SmartLog,
    /// Metrics over time.
    pub timeseries: TimeSeriesReport,
    /// For a trace replay: what the replay did to the trace (`null` for fio-like jobs).
    pub replay: Option<host::replay::ReplayStats>,
    /// For `ssdlab serve`: pacing, recovery and connections (`null` for simulated runs).
    #[serde(default)]
    pub live: Option<host::live::LiveStats>,
    /// Energy and mean power over the run.
    #[serde(default)]
    pub energy: EnergyReport,
    /// How the host reached the device: `nvme`, `legacy` or `legacy-ncq`.
    #[serde(default = "nvme")]
    pub host_interface: String,
    /// Host CPU and memory of a host-side FTL (`null` when the FTL runs on the device).
    #[serde(default)]
    pub host_stack: Option<HostReport>,
    /// The firmware architecture's locks, stage queues and wait list.
    #[serde(default)]
    pub architecture: ArchitectureReport,
    /// Flexible Data Placement per reclaim unit handle (`null` without `[ftl.fdp]`;
    /// docs/fdp.md).
    #[serde(default)]
    pub fdp: Option<FdpReport>,
}

/// What Flexible Data Placement did: per reclaim unit handle and for the device.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FdpReport {
    /// Reclaim unit handles.
    pub handles: u16,
    /// Reclaim groups.
    pub reclaim_groups: u32,
    /// `initially` or `persistently` isolated.
    pub isolation: String,
    /// Bytes of one reclaim unit.
    pub ru_bytes: u64,
    /// Each handle, in order.
    pub per_handle: Vec<FdpHandleReport>,
    /// Host bytes written (mapping units, as the FDP Statistics log's HBMW).
    pub host_bytes: u64,
    /// Media bytes written by every stream, translation pages included (MBMW).
    pub media_bytes: u64,
    /// Media bytes erased (MBE).
    pub erased_bytes: u64,
    /// Media bytes over host bytes (the device's WAF).
    pub waf: f64,
    /// Reclaim Unit Handle Updates the host asked for.
    pub ruh_updates: u64,
    /// Writes refused for a placement identifier that does not exist.
    pub invalid_pids: u64,
}

/// One reclaim unit handle's data.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FdpHandleReport {
    /// The handle.
    pub handle: u16,
    /// Bytes the host wrote under it (into the cache).
    pub host_bytes: u64,
    /// Its bytes programmed by cache write-back.
    pub user_bytes: u64,
    /// Its bytes GC moved: out of its own blocks, and out of shared GC blocks those whose
    /// logical unit was last written back under it.
    pub gc_bytes: u64,
    /// `user_bytes + gc_bytes`.
    pub media_bytes: u64,
    /// `media_bytes / host_bytes` (`null` if the host wrote nothing under it).
    pub waf: Option<f64>,
    /// Reclaim units it filled or was moved off.
    pub reclaim_units: u64,
}

fn nvme() -> String {
    "nvme".into()
}

/// What a firmware architecture's synchronisation did (over the device's life so far).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ArchitectureReport {
    /// `softssd`, `tradition-N`, `pipessd` or `deepflash`; `host-ftl` when the FTL runs on the
    /// host (a bridge reports its drives' architecture).
    pub name: String,
    /// Each lock class (lock-based architectures).
    pub locks: Vec<LockReport>,
    /// Each stage queue (pipelines).
    pub queues: Vec<QueueReport>,
    /// PipeSSD's wait list.
    pub wait_list: Option<WaitListReport>,
}

/// One lock class.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LockReport {
    /// The class (`cache line`, `cache index`, `mapping table`, `nvme queues`).
    pub class: String,
    /// Acquisitions.
    pub acquisitions: u64,
    /// Share of acquisitions that found the lock held.
    pub contended_share: f64,
    /// Mean time from asking to holding, ns.
    pub mean_wait_ns: f64,
    /// 99th percentile of that time, ns (within 1/32).
    pub p99_wait_ns: u64,
    /// Time held, summed, ns.
    pub held_ns: u64,
}

/// One stage queue.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct QueueReport {
    /// Its name (`fetch -> ftl`, ...).
    pub name: String,
    /// Requests that went through.
    pub items: u64,
    /// Mean occupancy over the simulated run.
    pub mean_occupancy: f64,
    /// Largest occupancy.
    pub max_occupancy: u64,
    /// Mean time from entering to being taken by the next stage, ns.
    pub mean_wait_ns: f64,
}

/// PipeSSD's wait list: sub-requests held until their cache line holds what their roadbook
/// expects.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WaitListReport {
    /// Sub-requests that waited.
    pub waited: u64,
    /// Mean wait of those that waited, ns.
    pub mean_ns: f64,
    /// 99th percentile of those waits, ns (within 1/32).
    pub p99_ns: u64,
}

/// IOPS and bandwidth.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Throughput {
    /// Commands completed in the window.
    pub count: u64,
    /// Commands per second.
    pub iops: f64,
    /// Megabytes (10^6 bytes) per second.
    pub mb_per_s: f64,
}

/// One flow's results (a job, all its clones, a trace replay, or one volume (or the grouped
/// volumes) of a replay with volume flows).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FlowReport {
    /// The job's name (a trace replay: the trace file's).
    pub name: String,
    /// The submission queues its commands went to.
    pub queues: Vec<u16>,
    /// Its measured window, ns: from the run's window start to its last completion (its rates
    /// are over this window, so a flow that ends early is not diluted by the others).
    pub window_ns: u64,
    /// Per direction, only those that ran.
    pub ops: BTreeMap<String, OpReport>,
    /// Every direction together.
    pub total: Throughput,
    /// With `--alone`: its mean latency, ns, when it ran by itself on the same starting state
    /// (`None` without it).
    #[serde(default)]
    pub alone_latency_mean_ns: Option<f64>,
    /// With `--alone`: its mean latency shared over alone (MQSim's slowdown; `None` without it).
    #[serde(default)]
    pub slowdown: Option<f64>,
    /// Its share of the data cache and the host reads it served, when `ftl.cache.partition`
    /// splits the cache between flows (absent with a shared cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<FlowCache>,
    /// Its lookups of the CMT (with more than one flow, under DFTL), and its CMT partition when
    /// `ftl.mapping.partition` splits the CMT between flows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmt: Option<FlowCmt>,
    /// The flash transactions it caused, counted over the whole run like `flash` (absent with
    /// one flow; docs/multi-tenant.md says what counts for whom).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flash: Option<FlowFlash>,
}

/// Flash transactions one flow caused (or no flow: `flows_unattributed`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowFlash {
    /// Page reads.
    pub reads: u64,
    /// Page programs.
    pub programs: u64,
    /// Block erases.
    pub erases: u64,
    /// Transactions per source: user, mapping, GC (as `flash.by_source`).
    pub by_source: [u64; 3],
    /// Page reads of GC (the victims' valid data read to be moved).
    pub gc_reads: u64,
    /// Page programs of GC (the moved data written again).
    pub gc_programs: u64,
    /// Bytes read over the channels.
    pub read_bytes: u64,
    /// Bytes programmed over the channels.
    pub program_bytes: u64,
}

impl FlowFlash {
    /// The report's view of the FIL's per-flow counts.
    pub fn new(c: &firmware::fil::FlowFlash) -> FlowFlash {
        use firmware::fil::FlashOp;
        FlowFlash {
            reads: c.count(FlashOp::Read),
            programs: c.count(FlashOp::Program),
            erases: c.count(FlashOp::Erase),
            by_source: c.by_source(),
            gc_reads: c.ops[FlashOp::Read as usize][2],
            gc_programs: c.ops[FlashOp::Program as usize][2],
            read_bytes: c.bytes[FlashOp::Read as usize],
            program_bytes: c.bytes[FlashOp::Program as usize],
        }
    }
}

/// A flow's data-cache partition.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FlowCache {
    /// Lines the partition holds at most.
    pub lines: u32,
    /// Host reads of units served from the cache (counted from the start of the run, ramp
    /// included).
    pub read_hits: u64,
    /// Host reads of units that went to flash.
    pub read_misses: u64,
    /// `read_hits` over both (`None` with no reads).
    pub read_hit_ratio: Option<f64>,
}

/// A flow's lookups of the CMT.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FlowCmt {
    /// Segments its partition holds at most (absent with a shared CMT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments: Option<u32>,
    /// Lookups of a mapping entry that found its segment cached (whichever flow loaded it),
    /// counted over the whole run (ramp included, ageing not).
    pub hits: u64,
    /// Lookups that loaded their segment from a translation page.
    pub misses: u64,
    /// `hits` over both (`None` with no lookups).
    pub hit_ratio: Option<f64>,
}

/// One direction's results.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OpReport {
    /// Throughput.
    #[serde(flatten)]
    pub throughput: Throughput,
    /// Bytes moved.
    pub bytes: u64,
    /// Failed commands.
    pub errors: u64,
    /// Host-observed latency, ns: count, mean, min, p50, p90, p99, p99.9, max.
    pub latency_ns: Summary,
    /// Mean time per phase, ns (they add up to the mean latency).
    pub phases_ns: Phases,
    /// Median of each phase, ns (within 3%).
    pub phases_p50_ns: Phases,
    /// 99th percentile of each phase, ns (within 3%).
    pub phases_p99_ns: Phases,
    /// The latency distribution: `[quantile, ns]` pairs from 0 to 1 (every percent, then the
    /// tail: 99.5, 99.9, 99.95, 99.99, 99.999%).
    pub latency_cdf_ns: Vec<[f64; 2]>,
}

/// What the ECC did on host reads: the firmware's counts, with the rates they give.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EccReport {
    /// The counts (`docs/report-schema.md`, `ecc`).
    #[serde(flatten)]
    pub counts: firmware::ecc::EccStats,
    /// Observed raw bit-error rate: bit errors found in codewords within t over the bits of
    /// every codeword checked ([`firmware::ecc::EccStats::rber`]).
    #[serde(default)]
    pub rber: f64,
    /// Uncorrectable bit error rate (JESD218): mapping units a read failed to return over
    /// the bits of data read ([`firmware::ecc::EccStats::uber`]).
    #[serde(default)]
    pub uber: f64,
}

impl EccReport {
    /// The report's section for `counts`.
    pub fn new(counts: firmware::ecc::EccStats) -> EccReport {
        EccReport { rber: counts.rber(), uber: counts.uber(), counts }
    }
}

impl std::ops::Deref for EccReport {
    type Target = firmware::ecc::EccStats;
    fn deref(&self) -> &firmware::ecc::EccStats {
        &self.counts
    }
}

/// Metrics over time. Each column has one value per interval; `t_ms` is the interval's end,
/// in milliseconds since the run started. Intervals are `interval_ns` wide, except that the
/// first ones may be narrower (the interval doubles to keep the series short).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TimeSeriesReport {
    /// Width of the last intervals, ns.
    pub interval_ns: u64,
    /// End of each interval, ms since the run started.
    pub t_ms: Vec<f64>,
    /// Reads completed per second.
    pub read_iops: Vec<f64>,
    /// Writes completed per second.
    pub write_iops: Vec<f64>,
    /// Every command completed per second.
    pub iops: Vec<f64>,
    /// Megabytes (10^6) moved per second.
    pub mb_per_s: Vec<f64>,
    /// Mean latency of the commands completed in the interval, us (`null` if none).
    pub latency_mean_us: Vec<Option<f64>>,
    /// 99th-percentile latency, us (within 3%; `null` if none).
    pub latency_p99_us: Vec<Option<f64>>,
    /// Flash units programmed over host units written in the interval (`null` if the host
    /// wrote nothing).
    pub waf: Vec<Option<f64>>,
    /// Free blocks at the interval's end.
    pub free_blocks: Vec<u64>,
    /// Units GC moved in the interval.
    pub gc_units_moved: Vec<u64>,
    /// Blocks erased in the interval.
    pub erases: Vec<u64>,
    /// Mean power in the interval by component, watts.
    #[serde(default)]
    pub power_w: PowerSeries,
    /// Host memory held by a host-side FTL at the interval's end, MiB (empty otherwise).
    #[serde(default)]
    pub host_memory_mib: Vec<f64>,
    /// Busy fraction of a host-side FTL's host cores in the interval (empty otherwise).
    #[serde(default)]
    pub host_cpu: Vec<f64>,
    /// Host page reads the ECC checked in the interval (each once, however many attempts).
    #[serde(default)]
    pub ecc_reads: Vec<u64>,
    /// Of them, reads corrected at the first attempt.
    #[serde(default)]
    pub ecc_corrected: Vec<u64>,
    /// Reads decoded after one or more retry steps.
    #[serde(default)]
    pub ecc_retried: Vec<u64>,
    /// Reads that failed every attempt (media errors).
    #[serde(default)]
    pub ecc_uncorrectable: Vec<u64>,
    /// Observed raw bit-error rate of the codewords checked in the interval (`null` if none).
    #[serde(default)]
    pub rber: Vec<Option<f64>>,
    /// Share of the interval the ECC core spent decoding.
    #[serde(default)]
    pub ecc_busy: Vec<f64>,
    /// Mean erase count (P/E cycles) of the good blocks at the interval's end.
    #[serde(default)]
    pub pe_mean: Vec<f64>,
}

/// Write amplification.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WafReport {
    /// Mapping units the host wrote.
    pub host_units: u64,
    /// Units programmed per stream: user (cache write-back), GC, mapping (translation pages).
    pub flash_units: [u64; 3],
    /// All flash units over host units.
    pub waf: f64,
    /// User and GC units over host units (translation pages excluded).
    pub data_waf: f64,
}

/// Garbage collection.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GcReport {
    /// Victims collected.
    pub invocations: u64,
    /// Valid units moved.
    pub units_moved: u64,
    /// Blocks erased.
    pub blocks_erased: u64,
    /// Host writes that waited for GC (foreground GC).
    pub foreground_waits: u64,
    /// Victims taken by static wear levelling.
    pub wl_migrations: u64,
    /// Free blocks at the end.
    pub free_blocks: u64,
    /// Victims (GC or wear levelling) whose collection was under way at the end: not in
    /// `invocations` or `wl_migrations`, their erase not in `blocks_erased`.
    #[serde(default)]
    pub victims_in_progress: u64,
    /// The part of `units_moved` moved out of the victims in progress.
    #[serde(default)]
    pub units_moved_in_progress: u64,
}

/// Erase-count statistics.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WearReport {
    /// Fewest erases of a good block.
    pub min: u32,
    /// Mean erases.
    pub mean: f64,
    /// Most erases.
    pub max: u32,
    /// Standard deviation.
    pub stddev: f64,
    /// Good blocks per erase count: `histogram[n]` blocks were erased `n` times.
    pub histogram: Vec<u64>,
}

/// A hit ratio.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HitRatio {
    /// Hits.
    pub hits: u64,
    /// Misses.
    pub misses: u64,
    /// hits / (hits + misses), 0 if none.
    pub ratio: f64,
}

impl HitRatio {
    /// From counts.
    pub fn new(hits: u64, misses: u64) -> Self {
        HitRatio { hits, misses, ratio: hits as f64 / (hits + misses).max(1) as f64 }
    }
}

/// Cache hit ratios.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CacheReport {
    /// Data cache (host reads).
    pub data: HitRatio,
    /// Cached mapping table (DFTL only).
    pub mapping: Option<HitRatio>,
    /// Mapping units held dirty in the data cache at the end (written by the host, not yet
    /// programmed: they are not in the WAF).
    pub dirty_units: u64,
}

/// The controller's DRAM by use (as configured: each use is a fixed allocation) and the
/// pending mapping updates' high-water mark.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DramReport {
    /// The controller's DRAM.
    pub capacity_bytes: u64,
    /// The data cache's lines.
    pub data_cache_bytes: u64,
    /// The mapping table in DRAM: the CMT (DFTL) or the whole map (4 bytes per unit); 0 when
    /// the FTL runs on the host (`host_stack` has its memory).
    pub mapping_bytes: u64,
    /// DFTL: the budget for the mapping updates GC makes to entries that are not cached, held
    /// until their translation page is rewritten.
    pub pending_budget_bytes: u64,
    /// The most of that budget held at once.
    pub pending_high_bytes: u64,
    /// Translation pages GC rewrote itself because the budget was full.
    pub gc_tpage_writes: u64,
    /// The rest (firmware, queues, buffers).
    pub other_bytes: u64,
}

/// A core's load.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CoreLoad {
    /// Core name.
    pub name: String,
    /// Busy fraction of the simulated run.
    pub busy: f64,
    /// Busy fraction by role (`fetch`, `ftl`, `fil`, `cache`, `post`, `lock wait`, `other`).
    #[serde(default)]
    pub by_role: BTreeMap<String, f64>,
}

/// Busy fractions over the whole simulated run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Utilisation {
    /// Per channel.
    pub channels: Vec<f64>,
    /// Per die.
    pub dies: Vec<f64>,
    /// Per controller core.
    pub cores: Vec<CoreLoad>,
}

/// Flash transactions.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FlashReport {
    /// Page reads.
    pub reads: u64,
    /// Page programs.
    pub programs: u64,
    /// Block erases.
    pub erases: u64,
    /// Transactions per source: user, mapping, GC.
    pub by_source: [u64; 3],
    /// Mean read latency through the FIL, ns.
    pub mean_read_ns: f64,
    /// Mean program latency through the FIL, ns.
    pub mean_program_ns: f64,
    /// Page programs per die, in die order (of every array of the system, one after another).
    #[serde(default)]
    pub die_programs: Vec<u64>,
    /// Page reads per die.
    #[serde(default)]
    pub die_reads: Vec<u64>,
    /// Block erases per die.
    #[serde(default)]
    pub die_erases: Vec<u64>,
}

/// Host-link traffic.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LinkReport {
    /// Bytes host to device (commands, write data).
    pub to_device: u64,
    /// Bytes device to host (read data, completions).
    pub to_host: u64,
}
