//! `ssdlab figure NAME`: the papers whose figures ssdlab regenerates, and their options.

use std::path::PathBuf;

use clap::{Args, Subcommand};

#[derive(Args, Debug)]
pub struct FigureArgs {
    #[command(subcommand)]
    pub name: FigureName,
}

#[derive(Subcommand, Debug)]
pub enum FigureName {
    /// SoftSSD (the board's measured figures): the software NVMe interface alone, one read's
    /// command and transfer phases, and throughput by threads 1 -> 64 (reads and writes).
    Softssd(FigureOpts),
    /// PipeSSD (DAC'24): PipeSSD, DeepFlash, Tradition-4 and Tradition-8 on the pipessd device
    /// with 4 and 8 channels and with half the data cache, over the shared traces (WebSearch,
    /// TPC-C, MSR hm_0) and a Financial-like workload: throughput against Tradition-4, data
    /// cache hit ratios, and the lock share of Tradition-4's tail latency.
    Pipessd(PipessdFigureArgs),
    /// The FPGA storage array with a host-side FTL: write bandwidth with and without
    /// super-page writes, read bandwidth by block size, 4 KiB random IOPS by read/write mix,
    /// small reads by queue depth, and host-directed write allocation.
    HostftlArray(FigureOpts),
    /// The PCIe SSD design study (FSSD vs BSSD, with a SATA SSD for power): host memory and
    /// CPU, queued vs legacy latency, scaling with workers, the GC write cliff, power.
    PcieStudy(PcieStudyArgs),
    /// Steady-state write amplification of uniform random 4 KiB writes against the analytic
    /// models of cleaning: over-provisioning 7-50% x greedy, FIFO and cost-benefit on a
    /// page-mapped device (greedy against its mean-field model with the device's block size,
    /// FIFO against Desnoyers' closed form, both at the spare space the firmware really has),
    /// then DFTL's extra write amplification as the CMT grows from MQSim's share of the map to
    /// all of it. docs/gc-theory.md explains the accounting.
    GcTheory(GcTheoryArgs),
    /// MQSim's FAST'18 interference experiments (its `fast18/` folder): back-end contention,
    /// data-cache contention (the cache shared, then split equally between the flows) and queue
    /// fetch size 16 and 1024, flow 2's queue depth swept as
    /// the configurations do, on `mqsim-default` set as each configuration: each flow's
    /// slowdown (mean latency shared / alone) and the fairness index (least slowdown over
    /// greatest) per point, MQSim's own beside them with `--mqsim`. docs/mqsim-fast18.md.
    MqsimFast18(MqsimFast18Args),
    /// The fidelity table: one row per published comparison of the five papers (SoftSSD,
    /// PipeSSD, the host-FTL array, the PCIe study, NICFS): the published value, ssdlab's on
    /// the default configuration, and whether it reproduces it, or under which condition the
    /// paper does not state (docs/fidelity.md has the rules and the table this writes).
    Fidelity(FidelityArgs),
}

/// Options of `ssdlab figure fidelity`.
#[derive(Args, Debug, Clone)]
pub struct FidelityArgs {
    /// Write the table as Markdown (the body of docs/fidelity.md's table section) to FILE.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Compare the verdicts with FILE's table (a table this command wrote) and fail, listing
    /// them, when any comparison is missing, new, or judged differently.
    #[arg(long, value_name = "FILE")]
    pub check: Option<PathBuf>,
    /// Every figure in its --quick form (shrunk devices, short runs; a few minutes in all):
    /// the verdicts of the quick form, not of the figures.
    #[arg(long)]
    pub quick: bool,
    /// Skip the conditioned runs (the parameters the papers leave open, set as the maps in
    /// docs/architectures.md and nicfs/BENCHMARKS.md found them): default verdicts only.
    #[arg(long)]
    pub no_conditions: bool,
    /// The shared trace directory (PipeSSD's traces). Default: ../shared/traces.
    #[arg(long, value_name = "DIR")]
    pub traces: Option<PathBuf>,
    /// Seed of every run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Options of `ssdlab figure mqsim-fast18`.
#[derive(Args, Debug, Clone)]
pub struct MqsimFast18Args {
    /// Write the table (table.csv, table.json), every point (points.json, points.csv, and each
    /// shared run's report as EXPERIMENT-scenario-N.json) and a chart per experiment (PNG, SVG).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// MQSim's results (`scripts/mqsim-fast18` leaves them as DIR/EXPERIMENT/*_scenario_N.xml):
    /// its slowdown and fairness go beside ssdlab's.
    #[arg(long, value_name = "DIR")]
    pub mqsim: Option<PathBuf>,
    /// Only this experiment: backend-contention, qfs-16, qfs-1024, data-cache-contention or
    /// data-cache-partitioned.
    #[arg(long)]
    pub experiment: Option<String>,
    /// Simulated time of every run, ms (MQSim's Stop_Time is 10 s, and 100 s for most
    /// data-cache scenarios).
    #[arg(long, default_value_t = 200)]
    pub runtime_ms: u64,
    /// Blocks per plane (MQSim's 2048 gives 256 GiB on the flows' two ways; with the whole map
    /// in DRAM, capacity does not enter a uniform read's time, and fewer blocks fill faster).
    #[arg(long, default_value_t = 256)]
    pub blocks: u32,
    /// A smoke test in seconds (256 blocks, 10 ms runs, two points per experiment), not the figure.
    #[arg(long)]
    pub quick: bool,
    /// Seed of every run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Options of `ssdlab figure gc-theory`.
#[derive(Args, Debug, Clone)]
pub struct GcTheoryArgs {
    /// Write the tables (table.txt), every point's figures (points.json) and the charts
    /// (waf-by-op.png/.svg, dftl.png/.svg) under this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Blocks of the one plane (with 4 KiB pages). More blocks bring the device nearer the
    /// models' many-block limit and take longer; 2048 runs the figure in minutes.
    #[arg(long, default_value_t = 2048)]
    pub blocks: u32,
    /// Pages (4 KiB, one mapping unit each) per block: the b of greedy's model.
    #[arg(long, default_value_t = 128)]
    pub pages: u32,
    /// GC pacing of the main sweep (`ftl.gc.pacing`); the other pacing is run at two points
    /// as a check that it does not matter under sustained writes.
    #[arg(long, default_value = "eager", value_parser = ["eager", "paced"])]
    pub pacing: String,
    /// Over-provisioning (`ftl.op`, spare over raw) of the DFTL sweep.
    #[arg(long, default_value_t = 0.12)]
    pub dftl_op: f64,
    /// A smoke test in seconds (256 blocks of 64 pages, two OP points), not the figure.
    #[arg(long)]
    pub quick: bool,
    /// Seed of every run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Options of `ssdlab figure pcie-study`.
#[derive(Args, Debug, Clone)]
pub struct PcieStudyArgs {
    #[command(flatten)]
    pub opts: FigureOpts,
    /// Instead of the study's figures, map where the host-FTL card's scaling with workers
    /// (published: IOPS x2.2 at 4, latency +289% at 8) appears: host cores 1, 2, 8 x host
    /// cycles per command submitted and completed 6,000 to 120,000 (the study states neither).
    #[arg(long, conflicts_with = "map_queued")]
    pub map_workers: bool,
    /// Instead of the study's figures, map where queued (QD128) latency reaches ~100x the
    /// legacy (synchronous) latency as the study measured: on fssd, host cores 1 and 8 x the
    /// host's time to submit and complete a command (4 to 320 us); on bssd, the bridge's
    /// conversion time per direction (5 to 200 us). The study states none of them.
    #[arg(long)]
    pub map_queued: bool,
}

/// Options of the host-FTL array and PCIe study figures.
#[derive(Args, Debug, Clone)]
pub struct FigureOpts {
    /// Write the table (CSV and JSON) and each run's report and plots under this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Shrink the devices (fewer blocks per plane) and the runs: a smoke test in seconds, not
    /// the figures.
    #[arg(long)]
    pub quick: bool,
    /// Seed of every run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

#[derive(Args, Debug)]
pub struct PipessdFigureArgs {
    /// Where the table (figure.txt), the data (figure.json) and the charts go.
    #[arg(long, value_name = "DIR", default_value = "figures/pipessd")]
    pub out: PathBuf,
    /// The shared trace directory. Default: ../shared/traces.
    #[arg(long, value_name = "DIR")]
    pub traces: Option<PathBuf>,
    /// The device: `pipessd` (the prototype's 8 channels, set to 4 for the 4-channel setups)
    /// or `pipessd-paper` (the paper's platform as it states it: 4 channels, DRAM a thousandth
    /// of capacity, a cheap fetch; its 8-channel setup is `pipessd-paper-8ch`). Any preset with
    /// four controller cores runs: the 8-channel setup is its `-8ch` sibling if it has one.
    #[arg(long, value_name = "PRESET", default_value = "pipessd")]
    pub preset: String,
    /// Blocks per plane (8192 is the presets' full 64 GiB chip; timing, cores and caches are
    /// the preset's whatever the size).
    #[arg(long, default_value_t = 1024)]
    pub blocks: u32,
    /// Commands outstanding: the closed-loop depth of the trace replays and the queue depth
    /// of the Financial-like job.
    #[arg(long, default_value_t = 32)]
    pub depth: u32,
    /// Requests each Tradition thread runs at once (`architecture.workers_per_core` of
    /// Tradition-4 and Tradition-8). The paper's threads are full-function and run a request to
    /// completion; it does not say how many each has in flight. Default: the preset's (64,
    /// where a waiting request holds back none of its thread's others). docs/architectures.md
    /// maps PipeSSD's gain against this (examples/pipessd-threads.toml).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub requests_per_thread: Option<u32>,
    /// Also replay the traces open loop (records issued at a fixed rate, ignoring timestamps
    /// and completions, as the paper's traces preloaded into memory were) to Tradition-4 and
    /// PipeSSD, at these percentages of the saturation rate (the most records per second any
    /// design completed closed loop on that setup and trace), e.g. 25,50,100,150. The paper
    /// does not state its rate. Written to open-loop.json and after the main table.
    #[arg(long, value_name = "PCT,...", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub open_loop: Vec<u32>,
    /// A short run (a smoke test): the 4-channel device only, fewer synthetic commands.
    #[arg(long)]
    pub quick: bool,
    /// Run the Financial-like job this long (simulated seconds) before measuring it, then
    /// measure it for 2 s. The aged device's data cache starts full of dirty lines that ageing
    /// left, scattered over the whole device; the job's first misses write them back, each
    /// usually a mapping-cache miss too, and 150,000 commands (the default, 0: no warm-up) end
    /// before they are gone on pipessd-paper (docs/architectures.md, "The Financial-like row's
    /// start"). 6 covers every setup of pipessd-paper.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0, value_parser = non_negative_seconds)]
    pub warm_up: f64,
    /// Seed of every run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// A number of seconds, 0 or more (finite).
fn non_negative_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Ok(v) => Err(format!("must be 0 or more seconds (got {v})")),
        Err(e) => Err(format!("not a number of seconds: {e}")),
    }
}
