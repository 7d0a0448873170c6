//! `ssdlab replay` and `ssdlab run --trace`: the trace, how it is timed, and where its volumes go.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{CommonArgs, OutputArgs, StartArgs};

/// `ssdlab replay TRACE [DEVICE]`.
#[derive(Args, Debug)]
pub struct ReplayCmd {
    /// The trace: SPC, MSR Cambridge CSV, MQSim/DiskSim ASCII, blkparse text, fio iolog
    /// (v2/v3) or an ssdlab recording (`serve --record`); the format is detected (or forced with --format); gzip, bzip2 and zstd are
    /// read transparently. It is read through once before the device is built, so that a bad
    /// line anywhere, or nothing to replay, fails at once.
    pub trace: PathBuf,
    /// A preset name or a TOML file. Default: softssd.
    pub device: Option<String>,
    /// With --volume-flows: also replay each flow by itself (the others' records dropped), on
    /// the same starting state, layout and queues, and report each flow's slowdown and the
    /// fairness index, as `ssdlab run --alone` does for jobs.
    #[arg(long)]
    pub alone: bool,
    #[command(flatten)]
    pub replay: ReplayArgs,
    #[command(flatten)]
    pub start: StartArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// How to replay a trace.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// timed: issue at the trace's timestamps (scaled by --speed); rate: open loop, one
    /// request every 1/--replay-iops seconds whatever the timestamps (a trace preloaded into
    /// memory and fed at a fixed rate); closed: keep --depth commands outstanding and ignore
    /// timestamps.
    #[arg(long, value_enum, default_value_t = ReplayModeArg::Timed, requires = "trace")]
    pub mode: ReplayModeArg,
    /// Timed mode: time compression (2 replays twice as fast, 0.5 at half speed). Default: 1.
    #[arg(long, requires = "trace")]
    pub speed: Option<f64>,
    /// Rate mode: requests (trace records) issued per second of simulated time, open loop
    /// (nothing waits for completions; at most 1024 commands in flight, beyond which the lag
    /// grows and `replay.host_stalls` counts the waits). Required with --mode rate.
    #[arg(long, value_name = "IOPS", allow_negative_numbers = true, requires = "trace")]
    pub replay_iops: Option<f64>,
    /// Closed-loop mode: commands kept outstanding. Default: 32.
    #[arg(long, requires = "trace")]
    pub depth: Option<u32>,
    /// Force the trace format: spc, msr, mqsim (or disksim), blkparse, iolog, recording.
    #[arg(long, value_name = "FORMAT", requires = "trace")]
    pub format: Option<host::trace::TraceFormat>,
    /// Count and skip malformed lines instead of stopping at the first.
    #[arg(long, requires = "trace")]
    pub skip_bad_lines: bool,
    /// blkparse: the action whose events are requests (Q queued, D issued, C completed).
    #[arg(long, default_value_t = 'Q', requires = "trace")]
    pub blkparse_action: char,
    /// Requests not aligned to mapping units: widen them to whole units, or split off the
    /// unaligned edges as their own commands (the device reads, modifies and writes those).
    #[arg(long, value_enum, default_value_t = AlignArg::Widen, requires = "trace")]
    pub align: AlignArg,
    /// Base offset of a volume (ASU, disk or device number), e.g. 1=64GiB (repeatable);
    /// addresses then fold into the device's logical capacity.
    #[arg(long, value_name = "VOL=BYTES", requires = "trace")]
    pub volume_offset: Vec<String>,
    /// Base offset of volumes without --volume-offset: volume number times this (default 0:
    /// every volume starts at 0).
    #[arg(long, value_name = "BYTES", requires = "trace")]
    pub volume_stride: Option<sim::ByteSize>,
    /// Queue pairs the replay spreads its commands over (round robin). Default: 8; with volume
    /// flows, one per flow up to the device's queues (flows beyond share them round robin).
    #[arg(long, requires = "trace")]
    pub queues: Option<u32>,
    /// Each request on the queue pair the trace names: an ssdlab recording's own (on by
    /// default for recordings), blkparse's CPU (CPU c on queue pair c mod Q + 1 of the device's
    /// Q, as blk-mq maps CPUs to hardware queues). `--trace-queues=false`: round robin.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", requires = "trace")]
    pub trace_queues: Option<bool>,
    /// Stop after this many records.
    #[arg(long, value_name = "N", requires = "trace")]
    pub max_records: Option<u64>,
    /// Where the trace's writes land: group:N or die:N on a host-side FTL's array, pid:N (an
    /// FDP placement identifier) on an SSD with [ftl.fdp].
    #[arg(long, value_name = "PLACE", requires = "trace")]
    pub placement: Option<firmware::hil::Placement>,
    /// Each write carries its volume's number as its FDP placement identifier: the volumes of
    /// a multi-volume trace (SPC ASUs, MSR disks, blkparse devices) as FDP streams.
    #[arg(long, requires = "trace", conflicts_with = "placement")]
    pub pid_per_volume: bool,
    /// Each volume of the trace a flow of its own: its own queue pair and its own figures in
    /// the report's flows and the flow table.
    #[arg(long, requires = "trace")]
    pub volume_flows: bool,
    /// A volume as a flow of its own, with its settings: 3, 3:pid=1, 3:priority=urgent,
    /// 3:pid=1,priority=high (repeatable; implies --volume-flows). priority: urgent, high,
    /// medium or low (weighted round robin arbitration, host.arbitration.kind = "weighted").
    #[arg(long, value_name = "VOL[:pid=N,priority=CLASS]", requires = "trace")]
    pub volume: Vec<String>,
    /// A TOML file of volume settings, e.g. `other = "group"` then `[volume.3]` with `pid = 1`
    /// and `priority = "urgent"` (implies --volume-flows; --volume adds to it).
    #[arg(long, value_name = "FILE", requires = "trace")]
    pub volume_file: Option<PathBuf>,
    /// Volumes not named by --volume or --volume-file: each its own flow (flows, the default),
    /// one flow together (group), or not replayed (drop). Implies --volume-flows.
    #[arg(long, value_enum, value_name = "WHAT", requires = "trace")]
    pub other_volumes: Option<OthersArg>,
    /// Where the volumes go on the device: offsets (at --volume-offset / --volume-stride, by
    /// default all at 0: they fold onto the same addresses) or footprint (each its own region,
    /// sized by its largest offset, packed and 1 MiB aligned).
    #[arg(long, value_enum, default_value_t = LayoutArg::Offsets, requires = "trace")]
    pub layout: LayoutArg,
    /// With --layout footprint: scale the regions down by one factor so that they fit the
    /// device (addresses past a scaled region fold into it).
    #[arg(long, requires = "trace")]
    pub fit: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OthersArg {
    /// Each its own flow.
    Flows,
    /// One flow together, `others`.
    Group,
    /// Not replayed (counted as dropped).
    Drop,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutArg {
    /// Base offsets (--volume-offset, --volume-stride; default all at 0), folded into the device.
    Offsets,
    /// Each volume its own region sized by its footprint.
    Footprint,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayModeArg {
    /// At the trace's timestamps.
    Timed,
    /// Open loop at a fixed rate (--replay-iops), ignoring timestamps.
    Rate,
    /// A fixed number of commands outstanding.
    Closed,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlignArg {
    /// Round to whole mapping units.
    Widen,
    /// Issue unaligned edges as separate commands.
    Split,
}
