//! [`JobSpec`]: one fio-like job, as plain data with fio's defaults.

use serde::{Deserialize, Serialize};

use super::confine::Confinement;
use sim::{ByteSize, SimDuration};

use super::bssplit::BsSplit;
use super::distribution::Distribution;
use super::extent::Extent;
use super::request::{IoOp, PerDir};

/// fio's `rw`: which directions a job issues and whether offsets are sequential or random.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    /// Sequential reads (fio's default).
    #[default]
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
    /// Sequential reads and writes mixed by `rwmixread` (also spelled `readwrite`); each
    /// direction keeps its own position.
    Rw,
    /// Random reads and writes mixed by `rwmixread`.
    RandRw,
    /// Sequential trims.
    Trim,
    /// Random trims.
    RandTrim,
}

impl RwMode {
    /// Whether offsets are random (as opposed to sequential).
    pub fn is_random(self) -> bool {
        matches!(self, RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw | RwMode::RandTrim)
    }

    /// Whether the job issues I/Os of direction `op`.
    pub fn issues(self, op: IoOp) -> bool {
        match self {
            RwMode::Read | RwMode::RandRead => op == IoOp::Read,
            RwMode::Write | RwMode::RandWrite => op == IoOp::Write,
            RwMode::Rw | RwMode::RandRw => op != IoOp::Trim,
            RwMode::Trim | RwMode::RandTrim => op == IoOp::Trim,
        }
    }

    /// The fio spelling (`randrw`).
    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::Rw => "rw",
            RwMode::RandRw => "randrw",
            RwMode::Trim => "trim",
            RwMode::RandTrim => "randtrim",
        }
    }
}

/// The most clones a run may have in all (`numjobs` summed over the jobs), as in fio.
pub const MAX_JOBS: u32 = 4096;

/// The largest `iodepth`: an NVMe queue of 65536 entries holds at most 65535 commands.
pub const MAX_IODEPTH: u32 = 65535;

/// The default block size, fio's: 4 KiB.
pub const DEFAULT_BS: ByteSize = ByteSize::kib(4);

/// One fio-like job. Built from a job file section (see
/// [`parse_job_file`](super::parse_job_file)), from command-line flags through
/// [`JobSpec::set`], or deserialized; checked against a device with [`JobSpec::validate`]; turned
/// into I/Os by [`JobStream`](super::JobStream).
///
/// The timing fields (`iodepth`, `numjobs`, `runtime`, `time_based`, `ramp_time`, `rate_bytes`,
/// `rate_iops`) are for the driver, which paces the stream in simulated time; the stream itself
/// only knows counts and bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JobSpec {
    /// The job's name (the section name in a job file). Default: `job`.
    pub name: String,
    /// Directions and sequential or random offsets (`rw`, `readwrite`). Default: `read`.
    pub rw: RwMode,
    /// Block size per direction (`bs`, `blocksize`), used where `bssplit` is not given.
    /// Default: 4 KiB.
    pub bs: PerDir<ByteSize>,
    /// Weighted block-size mix per direction (`bssplit`); replaces `bs` for the directions it
    /// gives. Default: none.
    pub bssplit: PerDir<Option<BsSplit>>,
    /// Alignment of random offsets within the region, per direction (`blockalign`, `ba`); the
    /// region is divided into blocks of this size. Sequential offsets just follow each other.
    /// Default: the direction's smallest block size.
    pub blockalign: PerDir<Option<ByteSize>>,
    /// I/Os kept in flight by each clone of the job (`iodepth`), at most [`MAX_IODEPTH`].
    /// Default: 1.
    pub iodepth: u32,
    /// Number of clones of this job, each with its own NVMe queue pair and its own stream
    /// (`numjobs`); at most [`MAX_JOBS`] over all jobs of a run. Default: 1.
    pub numjobs: u32,
    /// Percentage of reads in `rw` and `randrw` jobs (`rwmixread`; `rwmixwrite=W` sets it to
    /// `100 - W`). Default: 50.
    pub rwmixread: u32,
    /// Length of the region the job touches, from `offset` (`size`); bytes or a percentage of
    /// the device; clamped to the end of the device. Default: from `offset` to the end.
    pub size: Option<Extent>,
    /// Start of the region (`offset`); bytes (a multiple of the LBA size) or a percentage of the
    /// device (rounded down to the largest `blockalign`). Default: 0.
    pub offset: Extent,
    /// Added to `offset` once per clone: clone `i` starts at `offset + i * offset_increment`
    /// (`offset_increment`), so clones can work on disjoint slices. Default: 0.
    pub offset_increment: Extent,
    /// Bytes to transfer per loop before the job ends (`io_size`, `io_limit`); bytes or a
    /// percentage of the region. I/Os issued during `ramp_time` count, as in fio. Ignored with
    /// `time_based`. Default: the region's size.
    pub io_size: Option<Extent>,
    /// How many times to transfer `io_size` (`loops`). Default: 1.
    pub loops: u32,
    /// How random offsets are spread over the region (`random_distribution`). Default: `random`.
    pub random_distribution: Distribution,
    /// Draw uniform random offsets with replacement (`norandommap`). Without it, a uniform random
    /// job with one block size equal to its `blockalign` touches every block exactly once per
    /// pass over the region, in random order, like fio's random map; other random jobs always
    /// draw with replacement. Default: false.
    pub norandommap: bool,
    /// Stop after this many I/Os (`number_ios`; 0 means no limit). Default: no limit.
    pub number_ios: Option<u64>,
    /// Simulated run time after `ramp_time` (`runtime`, `timeout`; a bare number is seconds, 0
    /// means no limit): as in fio, a job runs for `ramp_time + runtime` in all. Without
    /// `time_based` the job also ends when its I/O budget is spent. Default: no limit.
    pub runtime: Option<SimDuration>,
    /// Keep going (wrapping around the region) until `runtime` has passed, ignoring `io_size`
    /// (`time_based`). Requires `runtime`. Default: false.
    pub time_based: bool,
    /// Simulated time at the start during which results are not recorded (`ramp_time`).
    /// Default: 0.
    pub ramp_time: SimDuration,
    /// Bandwidth cap per direction in bytes per second of simulated time (`rate`, with fio's
    /// suffixes: `rate=10m` is 10 MiB/s; `rate=,5m` caps only writes and trims). Default: none.
    pub rate_bytes: PerDir<Option<u64>>,
    /// I/O-rate cap per direction in I/Os per second of simulated time (`rate_iops`).
    /// Default: none.
    pub rate_iops: PerDir<Option<u64>>,
    /// A fixed seed for this job's stream (`randseed`), used instead of the run's seed so the
    /// job's I/Os stay the same whatever `--seed` is. Default: none (derive from the run seed).
    pub randseed: Option<u64>,
    /// fio's `randrepeat`, kept for the config echo. ssdlab is always repeatable: both values
    /// derive the stream from the run seed (or `randseed`). Default: true.
    pub randrepeat: bool,
    /// Where the job's writes land on a device whose FTL runs on the host (`placement`,
    /// ssdlab's own option: `group:N` or `die:N`). Default: the FTL chooses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<firmware::hil::Placement>,
    /// fio's zoned block device mode (`zonemode=zbd` and its options): writes go to zones'
    /// write pointers, reads to written data, zones reset as fio resets them. Default: off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zbd: Option<ZbdOptions>,
    /// FDP placement identifiers the job's writes carry (`fdp=1` with `fdp_pli=`, or
    /// `dataplacement=fdp` with `plids=`), one per write in turn (`plid_select=roundrobin`) or
    /// drawn at random (`plid_select=random`). Default: none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plids: Vec<u16>,
    /// `plid_select=random`: each write draws its placement identifier. Default: round robin.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub plid_random: bool,
    /// `end_fsync`: each clone flushes the device when its I/O is done (not counted as an
    /// I/O). Default: false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub end_fsync: bool,
    /// `fdp=1` or `dataplacement=fdp` was given (placement identifiers are needed). Default: false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fdp: bool,
    /// The parts of the array the job's data is confined to (`channels`, `ways`, `dies`,
    /// `planes`: ssdlab's options, MQSim's per-flow `Channel_IDs` ... `Plane_IDs`): its queues
    /// are bound to an NVM set of those planes. Default: the whole array.
    #[serde(skip_serializing_if = "Confinement::is_none")]
    pub confine: Confinement,
    /// The arbitration class of the job's queues (`queue_priority=urgent|high|medium|low`;
    /// the device must arbitrate by weighted round robin, `hil.arbitration`). Default: medium.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_priority: Option<firmware::hil::Priority>,
}

/// fio's `zonemode=zbd` options, as fio documents them (HOWTO, "I/O type").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZbdOptions {
    /// `zonesize`: must be the device's zone size if given (fio reads the zones from the
    /// device in this mode). Default: the device's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zonesize: Option<u64>,
    /// `max_open_zones` (or `job_max_open_zones`): zones the job's writes go to at once
    /// (0: the device's limit). Default: 0.
    pub max_open_zones: u32,
    /// `zone_reset_threshold`: once this fraction of the zones' capacity in the job's range
    /// holds data, zones are reset as `zone_reset_frequency` says. Default: none (a zone is reset
    /// only when every zone of the range is full and a write needs one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset_threshold: Option<f64>,
    /// `zone_reset_frequency`: over the threshold, a zone is reset before every 1/f-th write.
    /// Default: 1.
    pub reset_frequency: f64,
    /// `read_beyond_wp`: reads may go past write pointers (they read zeroes); otherwise they are
    /// moved into written data. Default: false.
    pub read_beyond_wp: bool,
}

impl Default for ZbdOptions {
    fn default() -> Self {
        ZbdOptions {
            zonesize: None,
            max_open_zones: 0,
            reset_threshold: None,
            reset_frequency: 1.0,
            read_beyond_wp: false,
        }
    }
}

impl Default for JobSpec {
    fn default() -> Self {
        JobSpec {
            name: "job".to_string(),
            rw: RwMode::Read,
            bs: PerDir::splat(DEFAULT_BS),
            bssplit: PerDir::default(),
            blockalign: PerDir::default(),
            iodepth: 1,
            numjobs: 1,
            rwmixread: 50,
            size: None,
            offset: Extent::ZERO,
            offset_increment: Extent::ZERO,
            io_size: None,
            loops: 1,
            random_distribution: Distribution::Uniform,
            norandommap: false,
            number_ios: None,
            runtime: None,
            time_based: false,
            ramp_time: SimDuration::ZERO,
            rate_bytes: PerDir::default(),
            rate_iops: PerDir::default(),
            randseed: None,
            randrepeat: true,
            placement: None,
            zbd: None,
            plids: Vec::new(),
            plid_random: false,
            end_fsync: false,
            fdp: false,
            confine: Confinement::default(),
            queue_priority: None,
        }
    }
}

impl JobSpec {
    /// A job with fio's defaults and the given name.
    pub fn new(name: impl Into<String>) -> Self {
        JobSpec { name: name.into(), ..JobSpec::default() }
    }

    /// The block sizes of direction `op` and their weights in percent (adding up to 100): the
    /// `bssplit` entries if given, otherwise `bs` with weight 100.
    pub fn block_sizes(&self, op: IoOp) -> Vec<(ByteSize, u32)> {
        match self.bssplit.get(op) {
            Some(split) => split.entries().iter().map(|e| (e.size, e.weight)).collect(),
            None => vec![(*self.bs.get(op), 100)],
        }
    }

    /// The least simulated time an I/O of `len` bytes in direction `op` must take up under the
    /// job's `rate_bytes` and `rate_iops` caps (the larger of the two, rounded up to the
    /// nanosecond); zero without caps. A driver that starts I/Os of a direction no closer
    /// together than this keeps to fio's per-direction rates.
    pub fn rate_gap(&self, op: IoOp, len: u32) -> SimDuration {
        const NS: u128 = 1_000_000_000;
        let by_bytes = self.rate_bytes.get(op).map_or(0, |r| (len as u128 * NS).div_ceil(r as u128));
        let by_iops = self.rate_iops.get(op).map_or(0, |r| NS.div_ceil(r as u128));
        SimDuration::from_nanos(by_bytes.max(by_iops).min(u64::MAX as u128) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_fios() {
        let j = JobSpec::new("a");
        assert_eq!(j.name, "a");
        assert_eq!(j.rw, RwMode::Read);
        assert_eq!(j.block_sizes(IoOp::Write), vec![(ByteSize::kib(4), 100)]);
        assert_eq!((j.iodepth, j.numjobs, j.rwmixread, j.loops), (1, 1, 50, 1));
        assert!(j.randrepeat && !j.time_based && !j.norandommap);
    }

    #[test]
    fn modes_know_their_directions() {
        assert!(RwMode::RandRw.issues(IoOp::Read) && RwMode::RandRw.issues(IoOp::Write));
        assert!(!RwMode::RandRw.issues(IoOp::Trim));
        assert!(RwMode::Trim.issues(IoOp::Trim) && !RwMode::Trim.issues(IoOp::Read));
        assert!(RwMode::RandTrim.is_random() && !RwMode::Rw.is_random());
        assert_eq!(RwMode::RandRw.name(), "randrw");
    }

    #[test]
    fn rate_gap_takes_the_tighter_cap() {
        let mut j = JobSpec::default();
        assert_eq!(j.rate_gap(IoOp::Read, 4096), SimDuration::ZERO);
        j.rate_iops.read = Some(1000);
        assert_eq!(j.rate_gap(IoOp::Read, 4096), SimDuration::from_millis(1));
        j.rate_bytes.read = Some(4096 * 100);
        assert_eq!(j.rate_gap(IoOp::Read, 4096), SimDuration::from_millis(10));
        assert_eq!(j.rate_gap(IoOp::Write, 4096), SimDuration::ZERO);
        j.rate_bytes.write = Some(3);
        assert_eq!(j.rate_gap(IoOp::Write, 1), SimDuration::from_nanos(333_333_334));
    }
}
