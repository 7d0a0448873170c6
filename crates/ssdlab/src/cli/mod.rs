//! Command-line arguments (raw, as parsed; commands turn them into validated settings).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use firmware::ftl::Precondition;

mod calibrate;
mod figure;
mod pts;
mod replay;
mod serve;
mod sweep;

pub use calibrate::CalibrateArgs;
pub use figure::{
    FidelityArgs, FigureArgs, FigureName, FigureOpts, GcTheoryArgs, MqsimFast18Args, PcieStudyArgs,
    PipessdFigureArgs,
};
pub use pts::{PtsArgs, PtsTest};
pub use replay::{AlignArg, LayoutArg, OthersArg, ReplayArgs, ReplayCmd, ReplayModeArg};
pub use serve::{ServeArgs, TimingArg};
pub use sweep::{SweepAction, SweepArgs, SweepCmd, SweepPlotArgs, WorkerArgs};

/// ssdlab: a software SSD platform. Simulate flash firmware deterministically in virtual time
/// and see everything inside.
#[derive(Parser, Debug)]
#[command(version, propagate_version = true, after_help = EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

const EXAMPLES: &str = "Examples:
  ssdlab run                               4 jobs of 4 KiB random 70/30 I/O on the softssd preset
  ssdlab run consumer-tlc --rw randread --bs 4k --iodepth 32 --numjobs 4 --number-ios 100000
  ssdlab run my.toml --job-file test.fio --json report.json
  ssdlab run --precondition steady-state --rw randwrite --number-ios 200000
                                           random writes on a device in GC steady state
  ssdlab age consumer-tlc --out aged.state  save a steady-state device ...
  ssdlab run --state aged.state --rw randread   ... and start runs from it
  ssdlab replay websearch.spc.gz pipessd --mode closed --depth 32
                                           replay a trace, keeping 32 commands outstanding
  ssdlab phys hostftl-array --op program --count 12800 --qd 256
                                           saturate the Host-FTL array with programs
  ssdlab presets                           list the built-in devices
  ssdlab config softssd > my.toml          start a configuration of your own from a preset
  ssdlab phys my.toml --op read --channels 1 --json out.json
  ssdlab run --json a.json --plot figs     save the report and draw its figures
  ssdlab compare a.json b.json             what changed from a.json to b.json
  ssdlab sweep op-gc.toml                  every run of a sweep file, on all cores, into one table
  ssdlab run --set ftl.op=0.2 --set ftl.gc.victim=cost-benefit
                                           change device settings by path
  ssdlab figure pipessd                    the PipeSSD comparison (four architectures, shared traces)
  ssdlab figure hostftl-array --out figs   the storage array paper's figures beside the published values
  ssdlab figure pcie-study --out figs      the PCIe SSD study's (FSSD, BSSD, SATA)
  ssdlab figure gc-theory --out figs       steady-state WAF beside the analytic models of GC
  ssdlab calibrate /var/tmp/f.img --from consumer-tlc --out my-drive.toml
                                           fit a preset to a drive's fio curves
  ssdlab pts consumer-tlc --blocks 86 --point-time 200ms --out pts/
                                           the SNIA PTS IOPS and write-saturation tests";

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Simulate a device under fio-like jobs and print (or save) the report.
    Run(Box<RunArgs>),
    /// Age a device (fast preconditioning and/or a simulated workload) and save it, for
    /// `ssdlab run --state FILE`.
    Age(Box<AgeArgs>),
    /// Replay a block trace (timed or closed-loop) and print (or save) the report.
    Replay(Box<ReplayCmd>),
    /// Drive the flash interface layer directly with raw page reads, programs or erases.
    Phys(PhysArgs),
    /// List the built-in device presets, or show one with its comments.
    Presets {
        /// A preset to show in full.
        name: Option<String>,
    },
    /// Print a fully resolved device configuration (every default written out) to edit.
    Config {
        /// A preset name or a TOML file. Default: softssd.
        device: Option<String>,
        /// Set a field first, as `run --set KEY=VALUE` does (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Measure the simulator itself: events, flash transactions per wall-clock second, memory.
    Bench(BenchArgs),
    /// Regenerate a paper's comparison from the model, the published values beside it.
    Figure(FigureArgs),
    /// Draw the figures of a JSON report (as `--plot DIR` does after a run).
    Plot(PlotArgs),
    /// Compare JSON reports side by side: each metric's change from the first file, and the
    /// settings that differ; or a live recording and its replay, request by request.
    Compare(CompareArgs),
    /// Serve the simulated device as a real block device over NBD (data in a NAND image
    /// file; survives a crash; Ctrl-C shuts down cleanly: it answers the requests in flight,
    /// writes the data cache and the mapping to the image and checkpoints it, which after
    /// heavy writing takes seconds, saying what it is doing).
    Serve(Box<ServeArgs>),
    /// Run many simulations over axes of settings and seeds, on every core (or a Ray
    /// cluster), into one table; `ssdlab sweep plot` draws it.
    Sweep(Box<SweepCmd>),
    /// Run the SNIA PTS Enterprise IOPS test (to steady state) and write-saturation test, on a
    /// simulated device or a live target through fio: tables, JSON and figures.
    Pts(Box<PtsArgs>),
    /// Fit a preset's timing to a drive: measure it with fio (a block device, a file or an NBD
    /// export), simulate the same points, and write the fitted preset and a report.
    Calibrate(Box<CalibrateArgs>),
    /// Run one spec of a sweep (used by `ssdlab sweep`).
    #[command(hide = true)]
    SweepWorker(WorkerArgs),
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// A preset name or a TOML file. Default: softssd.
    pub device: Option<String>,
    #[command(flatten)]
    pub jobs: JobArgs,
    /// Complete host commands without the FTL (measures the host interface alone).
    #[arg(long)]
    pub ftl_bypass: bool,
    /// Also run each job by itself, on the same starting state with the same stream, and
    /// report each flow's slowdown (its mean latency shared over alone) and the fairness
    /// index (the least slowdown over the greatest, as MQSim's FAST'18 paper defines it).
    /// Needs two or more jobs, or a trace with --volume-flows (each flow replayed alone, the
    /// others' records dropped); the device is built (and aged) again for every flow.
    #[arg(long)]
    pub alone: bool,
    /// Replay a block trace instead of fio-like jobs: SPC, MSR Cambridge, MQSim/DiskSim,
    /// blkparse or fio iolog, gzip/bzip2/zstd read transparently (same as `ssdlab replay`).
    #[arg(long, value_name = "FILE", conflicts_with_all = JOB_FLAGS)]
    pub trace: Option<PathBuf>,
    #[command(flatten, next_help_heading = "Trace replay (with --trace)")]
    pub replay: ReplayArgs,
    #[command(flatten)]
    pub start: StartArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// The workload flags a trace replay replaces.
const JOB_FLAGS: [&str; 17] = [
    "job_file",
    "rw",
    "bs",
    "bssplit",
    "iodepth",
    "numjobs",
    "rwmixread",
    "size",
    "offset",
    "random_distribution",
    "number_ios",
    "runtime",
    "ramp_time",
    "rate_iops",
    "rate",
    "time_based",
    "fio",
];

/// How to age a device before a run.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Ageing {
    /// A factory-fresh device.
    None,
    /// The fast preconditioner.
    Fast(Precondition),
}

impl std::str::FromStr for Ageing {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Ageing::None),
            _ => s.parse().map(Ageing::Fast).map_err(|e: String| e.replace("expected ", "expected none, ")),
        }
    }
}

/// What a run ages the device to when neither `--precondition` nor `--state` says.
pub use ssdlab::setup::DEFAULT_AGEING;

/// The state a run starts from.
#[derive(Args, Debug, Default)]
pub struct StartArgs {
    /// Age the device before the run, without simulating time: steady-state (the default: a
    /// random fill plus 2x its capacity of random overwrites, GC running as it would),
    /// steady-state:N, seq-fill, random-fill, or none (a factory-fresh device: reads of
    /// unwritten data complete without touching flash).
    #[arg(long, value_name = "KIND", conflicts_with = "state")]
    pub precondition: Option<Ageing>,
    /// Start from a device saved by `ssdlab age --out FILE` (its configuration is used unless
    /// a device is named, which must then match it).
    #[arg(long, value_name = "FILE", conflicts_with = "blocks")]
    pub state: Option<PathBuf>,
    /// With --state and a named device: allow differences that do not change the saved state
    /// (timing, cores, host interface, caches, GC and WL policies), listing them.
    #[arg(long, requires = "state")]
    pub allow_config_change: bool,
    #[command(flatten)]
    pub shape: ShapeArgs,
}

/// Changes to the named device before it is built (`run`, `replay` and `age`).
#[derive(Args, Debug, Default)]
pub struct ShapeArgs {
    /// Blocks per plane: shrinks the device without changing its timing (GC thresholds the
    /// device sets in blocks scale with it), as `serve --blocks` does; compare `run` and
    /// `serve` on the same device with the same number. Default: the device's own.
    #[arg(long)]
    pub blocks: Option<u32>,
    /// Change one device setting by its path, e.g. ftl.op=0.2, ftl.gc.victim=cost-benefit,
    /// controller.cores[0].clock=1GHz or architecture.kind=tradition (repeatable; applied in
    /// order, after --blocks). The value is TOML, or text; setting a section's `kind` starts
    /// that section afresh. `ssdlab config DEVICE --set ...` prints the result. With --state,
    /// the result must still fit the saved device (as a named device must).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
}

/// What to show or save beyond the summary.
#[derive(Args, Debug)]
pub struct OutputArgs {
    /// Print where each operation's time went: every phase's mean, share, median and p99.
    #[arg(long)]
    pub breakdown: bool,
    /// Initial time-series interval in simulated time (it doubles to keep at most 1000
    /// points), e.g. 1ms.
    #[arg(long, value_name = "DURATION", default_value = "100us")]
    pub interval: sim::SimDuration,
    /// Write one CSV line per command: identity, times and every phase in nanoseconds.
    #[arg(long, value_name = "FILE")]
    pub per_request: Option<PathBuf>,
    /// Write a Chrome / Perfetto trace (JSON) of the run: a track per controller core,
    /// channel, die and host queue, and a flow per request (open it in ui.perfetto.dev).
    #[arg(long, value_name = "FILE")]
    pub trace_events: Option<PathBuf>,
    /// Requests the trace follows (the first ones submitted in its window).
    #[arg(long, value_name = "N", default_value_t = 1000, requires = "trace_events")]
    pub trace_requests: u64,
    /// Start of the trace window, in simulated time since the run started (e.g. 5ms).
    #[arg(long, value_name = "DURATION", requires = "trace_events")]
    pub trace_from: Option<sim::SimDuration>,
    /// End of the trace window, in simulated time since the run started.
    #[arg(long, value_name = "DURATION", requires = "trace_events")]
    pub trace_until: Option<sim::SimDuration>,
    /// Draw the figures (latency CDF, throughput and latency over time, WAF, free blocks and
    /// GC, erase counts, utilisation, power) into this directory as PNG and SVG (created if
    /// missing).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// How the host reaches the device: nvme (each job clone on its own queue pair, --iodepth
    /// in flight), legacy (AHCI/SATA-like: one command per worker, one shared port holding
    /// one command) or legacy-ncq (the port holds 32).
    #[arg(long, value_name = "KIND", default_value = "nvme")]
    pub interface: host::interface::HostInterface,
}

impl Default for OutputArgs {
    fn default() -> Self {
        OutputArgs {
            breakdown: false,
            interval: sim::SimDuration::from_micros(100),
            per_request: None,
            trace_events: None,
            trace_requests: 1000,
            trace_from: None,
            trace_until: None,
            plot: None,
            interface: host::interface::HostInterface::Nvme,
        }
    }
}

/// `ssdlab plot REPORT --out DIR`.
#[derive(Args, Debug)]
pub struct PlotArgs {
    /// A report written by `ssdlab run --json FILE` (or replay).
    pub report: PathBuf,
    /// The directory for the PNG and SVG files (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// `ssdlab compare A.json B.json [C.json ...]`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Reports written by `ssdlab run --json FILE`; the first is the baseline. Or a recording
    /// (`ssdlab serve --record`) and its replay's per-request CSV (`ssdlab replay REC
    /// --per-request SIM.csv`): live and simulated latency request by request.
    #[arg(required = true, num_args = 2.., value_name = "REPORT")]
    pub reports: Vec<PathBuf>,
    /// With a recording and its replay: write the per-request table (CSV) here.
    #[arg(long, value_name = "FILE")]
    pub per_request: Option<PathBuf>,
    /// Also write the comparison as JSON to this file (`-`: to standard output, instead of
    /// the table).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct AgeArgs {
    /// A preset name or a TOML file. Default: softssd.
    pub device: Option<String>,
    /// Where to save the aged device.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    #[command(flatten)]
    pub shape: ShapeArgs,
    /// Fast preconditioning: seq-fill, random-fill, steady-state or steady-state:N (default
    /// steady-state, unless workload flags are given and this is not).
    #[arg(long, value_name = "KIND")]
    pub precondition: Option<Precondition>,
    /// Workload flags age the device by full simulation (after any --precondition).
    #[command(flatten)]
    pub jobs: JobArgs,
    /// Seed of the ageing.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// The workload: a fio job file, or fio options as flags (default: 4 jobs of 4 KiB random
/// I/O, 70% reads, queue depth 32, 50,000 I/Os each, over the first 8 GiB).
#[derive(Args, Debug, Default)]
pub struct JobArgs {
    /// A fio job file (the common INI subset; unsupported options are rejected by name).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["rw", "bs", "bssplit", "iodepth", "numjobs", "rwmixread", "size", "offset", "random_distribution", "number_ios", "runtime", "ramp_time", "rate_iops", "rate", "time_based"])]
    pub job_file: Option<PathBuf>,
    /// I/O pattern: read, write, randread, randwrite, randrw, rw. Default: randrw (the default
    /// job's, kept when other flags are given, as are its bs, iodepth, numjobs and number-ios).
    #[arg(long)]
    pub rw: Option<String>,
    /// Block size, e.g. 4k (fio syntax; `4k,16k` for reads and writes). Default: 4k.
    #[arg(long)]
    pub bs: Option<String>,
    /// Block-size mix, e.g. 4k/50:64k/50.
    #[arg(long)]
    pub bssplit: Option<String>,
    /// Commands in flight per job. Default: 32.
    #[arg(long)]
    pub iodepth: Option<String>,
    /// Clones of the job, each on its own NVMe queue. Default: 4, so `--number-ios 1000`
    /// alone runs 4,000 I/Os; `--numjobs 1` for one job.
    #[arg(long)]
    pub numjobs: Option<String>,
    /// Percentage of reads for rw and randrw.
    #[arg(long)]
    pub rwmixread: Option<String>,
    /// Region size (bytes or a percentage of the device).
    #[arg(long)]
    pub size: Option<String>,
    /// Region start (bytes or a percentage of the device).
    #[arg(long)]
    pub offset: Option<String>,
    /// random (uniform), zipf:THETA, pareto:H, zoned:..., or hotcold:H/A.
    #[arg(long, alias = "distribution")]
    pub random_distribution: Option<String>,
    /// I/Os per job. Default: 50,000 (unless --runtime or --time-based is given).
    #[arg(long)]
    pub number_ios: Option<String>,
    /// Simulated run time after the ramp, e.g. 2s.
    #[arg(long)]
    pub runtime: Option<String>,
    /// Simulated warm-up whose results are not recorded.
    #[arg(long)]
    pub ramp_time: Option<String>,
    /// I/O-rate cap per job (I/Os per simulated second).
    #[arg(long)]
    pub rate_iops: Option<String>,
    /// Bandwidth cap per job (bytes per simulated second, fio syntax: 10m).
    #[arg(long)]
    pub rate: Option<String>,
    /// Keep going until --runtime has passed.
    #[arg(long)]
    pub time_based: bool,
    /// Any other fio option as KEY=VALUE (repeatable; with --job-file, set in every job).
    #[arg(long, value_name = "KEY=VALUE")]
    pub fio: Vec<String>,
}

#[derive(Args, Debug, Clone)]
pub struct CommonArgs {
    /// Seed of the simulation's random number generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the full report as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Where page data lives: metadata (tags only), memory, or a NAND image file.
    #[arg(long, value_enum, default_value_t = StoreArg::Metadata)]
    pub store: StoreArg,
    /// The NAND image file for --store image (created if it does not exist).
    #[arg(long, value_name = "FILE")]
    pub image: Option<PathBuf>,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreArg {
    /// No payloads: data tags only (large devices, fast sweeps).
    Metadata,
    /// Page payloads in RAM.
    Memory,
    /// Page payloads in a NAND image file (--image).
    Image,
}

#[derive(Args, Debug)]
pub struct PhysArgs {
    /// A preset name or a TOML file. Default: softssd.
    pub device: Option<String>,
    /// Operation.
    #[arg(long, value_enum, default_value_t = OpArg::Read)]
    pub op: OpArg,
    /// Percentage of reads for --op mixed.
    #[arg(long, default_value_t = 50)]
    pub read_pct: u32,
    /// Address pattern: stripe (round robin over dies, channel first) or random.
    #[arg(long, value_enum, default_value_t = PatternArg::Stripe)]
    pub pattern: PatternArg,
    /// Use only the first N channels.
    #[arg(long)]
    pub channels: Option<u32>,
    /// Use only the first N chips of each channel.
    #[arg(long)]
    pub ways: Option<u32>,
    /// Use only the first N dies of each chip.
    #[arg(long)]
    pub dies: Option<u32>,
    /// Use only the first N planes of each die.
    #[arg(long)]
    pub planes: Option<u32>,
    /// Transactions kept outstanding.
    #[arg(long, default_value_t = 64)]
    pub qd: u32,
    /// Open loop: transactions per second of simulated time (default: closed loop at --qd).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Transactions to issue.
    #[arg(long, default_value_t = 10_000)]
    pub count: u64,
    /// Bytes per read transfer (a partial page), e.g. 4KiB.
    #[arg(long)]
    pub read_bytes: Option<String>,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpArg {
    /// Page reads of pre-programmed blocks.
    Read,
    /// Page programs into fresh blocks.
    Program,
    /// Block erases.
    Erase,
    /// Reads and programs, mixed by --read-pct.
    Mixed,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternArg {
    /// Round robin over the dies, channel first.
    Stripe,
    /// A random die per transaction.
    Random,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Events (timer wake-ups) to simulate for the executor measurement.
    #[arg(long, default_value_t = 2_000_000)]
    pub events: u64,
    /// Flash transactions for the FIL measurement.
    #[arg(long, default_value_t = 300_000)]
    pub txns: u64,
    /// Raw capacity of the geometry whose metadata-only footprint is measured.
    #[arg(long, default_value = "1TiB")]
    pub capacity: String,
    /// The device of the full-size rows (a preset or a TOML file): steady-state
    /// preconditioning, 4 KiB random reads, then 4 KiB random writes from the write cliff on,
    /// with the units GC moved per wall second, all QD32 on the metadata store, with the
    /// process's peak memory. About two minutes at 512 GiB (`--quick` skips them).
    #[arg(long, default_value = "mqsim-default", value_name = "DEVICE")]
    pub full_size: String,
    /// Blocks per plane of the full-size device instead of its own (4096 makes mqsim-default
    /// a 1 TiB device).
    #[arg(long, value_name = "N")]
    pub blocks: Option<u32>,
    /// Random reads of the full-size rows.
    #[arg(long, default_value_t = 1_000_000, value_name = "N")]
    pub reads: u64,
    /// Random writes of the full-size rows, measured from the write cliff on (a million is
    /// not yet the long-run steady state of a 512 GiB device: docs/write-path.md has a run of
    /// eight million through DFTL's trough after the cliff).
    #[arg(long, default_value_t = 1_000_000, value_name = "N")]
    pub writes: u64,
    /// Skip the full-size rows.
    #[arg(long)]
    pub quick: bool,
}
