//! What a replay did to the trace: records read and skipped, requests the address mapping
//! changed, per-volume totals as the trace gave them, and (timed mode) how late commands were
//! issued.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sim::stats::Histogram;

use super::{Align, Mapped, ReplayMode};
use crate::trace::{TraceOp, TraceReader};

/// Per-volume totals, from the trace (before mapping).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VolumeStats {
    /// Read records.
    pub reads: u64,
    /// Write records.
    pub writes: u64,
    /// Trim records.
    pub trims: u64,
    /// Flush records.
    pub flushes: u64,
    /// Bytes the read records ask for.
    pub read_bytes: u64,
    /// Bytes the write records carry.
    pub written_bytes: u64,
}

impl VolumeStats {
    /// Counts one record.
    pub fn count(&mut self, op: TraceOp, len: u64) {
        match op {
            TraceOp::Read => {
                self.reads += 1;
                self.read_bytes += len;
            }
            TraceOp::Write => {
                self.writes += 1;
                self.written_bytes += len;
            }
            TraceOp::Trim => self.trims += 1,
            TraceOp::Flush => self.flushes += 1,
        }
    }
}

/// A replay's account of the trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayStats {
    /// The trace file.
    pub file: String,
    /// Its format (`spc`, `msr`, `mqsim`, `blkparse`, `iolog`).
    pub format: String,
    /// Its compression (`none`, `gzip`, `bzip2`, `zstd`).
    pub compression: String,
    /// `timed x1` or `closed-loop 32`.
    pub mode: String,
    /// `widen` or `split`.
    pub align: String,
    /// Records read (bad lines excluded).
    pub records: u64,
    /// Commands issued (a record may become several).
    pub commands: u64,
    /// Flush records (not replayed).
    pub skipped_flushes: u64,
    /// Zero-length records (not replayed).
    pub skipped_zero_length: u64,
    /// Records of volumes dropped (`--other-volumes drop`; not replayed).
    #[serde(default)]
    pub dropped: u64,
    /// Bad lines skipped (`--skip-bad-lines`).
    pub bad_lines_skipped: u64,
    /// Records whose address was wrapped into the logical capacity or moved to end there.
    pub folded: u64,
    /// Records widened to mapping units.
    pub widened: u64,
    /// Records split into an aligned middle and unaligned edges.
    pub split: u64,
    /// Records longer than the device, cut to its capacity.
    pub clipped: u64,
    /// Records cut into several commands by the maximum transfer size.
    pub chunked: u64,
    /// Timed mode: records whose timestamp is before an earlier record's.
    pub out_of_order: u64,
    /// Timed and rate modes: times the dispatcher waited for room (too many commands in flight).
    pub host_stalls: u64,
    /// Timed and rate modes: how late commands were issued after they were due, us.
    pub lag_mean_us: f64,
    /// 99th percentile of the lag, us.
    pub lag_p99_us: f64,
    /// Largest lag, us.
    pub lag_max_us: f64,
    /// Per volume (ASU, disk or device number), from the trace.
    pub volumes: BTreeMap<u32, VolumeStats>,
    /// Where the volumes went and which flows they made.
    #[serde(default)]
    pub layout: Option<super::LayoutReport>,
}

impl ReplayStats {
    /// Empty counts for a replay of `path` through `reader`.
    pub fn new(path: &Path, reader: &TraceReader, mode: ReplayMode, align: Align) -> Self {
        ReplayStats {
            file: path.display().to_string(),
            format: reader.format().name().to_string(),
            compression: format!("{:?}", reader.compression()).to_lowercase(),
            mode: match mode {
                ReplayMode::Timed { speed } => format!("timed x{speed}"),
                ReplayMode::Rate { iops } => format!("open-loop {iops} IOPS"),
                ReplayMode::ClosedLoop { depth } => format!("closed-loop {depth}"),
            },
            align: match align {
                Align::Widen => "widen".into(),
                Align::Split => "split".into(),
            },
            ..ReplayStats::default()
        }
    }

    /// The totals of `volume`.
    pub fn volume(&mut self, volume: u32) -> &mut VolumeStats {
        self.volumes.entry(volume).or_default()
    }

    /// Counts what mapping did to one record.
    pub fn count_mapping(&mut self, m: &Mapped) {
        self.folded += m.folded as u64;
        self.widened += m.widened as u64;
        self.split += m.split as u64;
        self.clipped += m.clipped as u64;
        self.chunked += m.chunked as u64;
    }

    /// Final counts: bad lines from the reader, the lag distribution, commands issued.
    pub fn finish(&mut self, reader: &TraceReader, lag: &Histogram, commands: u64) {
        self.bad_lines_skipped = reader.bad_lines();
        self.commands = commands;
        self.lag_mean_us = lag.mean() / 1e3;
        self.lag_p99_us = lag.quantile(0.99) as f64 / 1e3;
        self.lag_max_us = lag.max() as f64 / 1e3;
    }
}
