//! `ssdlab sweep`'s arguments.

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// `ssdlab sweep SWEEP.toml`, or `ssdlab sweep plot RESULTS`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true, after_help = SWEEP_HELP)]
pub struct SweepCmd {
    #[command(subcommand)]
    pub action: Option<SweepAction>,
    #[command(flatten)]
    pub run: SweepArgs,
}

const SWEEP_HELP: &str = "A sweep file names a base run, the axes and the seeds:
  seeds = [1, 2, 3]
  [base]
  device = \"softssd\"
  blocks = 64
  workload = { rw = \"randwrite\", number_ios = 20000 }
  [[axis]]
  key = \"ftl.op\"                       # any --set path, workload.OPTION, device, blocks, precondition
  values = [0.07, 0.15, 0.28]          # or { from = 0.1, to = 0.3, step = 0.1 }

Results go to OUT/results.parquet (one row per run: axis values, seed, status, headline metrics),
OUT/sweep.json and OUT/runs/HASH.json (each run's full report). A second invocation runs only
the runs whose results are missing. See the README's \"Sweeps and Python\".";

#[derive(Subcommand, Debug)]
pub enum SweepAction {
    /// Draw a metric of a sweep's results against an axis, a line (or bars) per value of
    /// another axis, with error bars over the seeds.
    Plot(SweepPlotArgs),
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The sweep file (TOML).
    #[arg(required = true, value_name = "SWEEP.toml")]
    pub file: Option<PathBuf>,
    /// The results directory (default: the sweep file's `out`, else NAME-results beside it).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Worker processes (default: the sweep file's `workers`, else one per core).
    #[arg(long, short = 'j', value_name = "N")]
    pub workers: Option<usize>,
    /// Write the table as CSV (results.csv) instead of Parquet.
    #[arg(long)]
    pub csv: bool,
    /// List the runs (axis values, seed, whether their results exist) and run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run: print each run as the `ssdlab run` command that gives its report.
    #[arg(long, requires = "dry_run")]
    pub commands: bool,
    /// Run again the runs recorded as failed.
    #[arg(long)]
    pub retry_failed: bool,
    /// Run on a Ray cluster: its head's HOST:PORT, ray://HOST:PORT, auto, or local (start Ray
    /// on this machine). Needs `pip install 'ssdlab[ray]'` in the Python that $SSDLAB_PYTHON
    /// names (default python3).
    #[arg(long, value_name = "ADDRESS")]
    pub ray: Option<String>,
    /// Wall-clock time a run may take, e.g. 10m (over it, it is killed and recorded as failed).
    #[arg(long, value_name = "DURATION")]
    pub time_budget: Option<String>,
    /// Resident memory a run may use, e.g. 4GiB (default: the machine's memory shared by the
    /// workers).
    #[arg(long, value_name = "SIZE")]
    pub memory_budget: Option<sim::ByteSize>,
}

/// `ssdlab sweep plot RESULTS --x AXIS --y METRIC`.
#[derive(Args, Debug)]
pub struct SweepPlotArgs {
    /// A sweep's results directory (or its table).
    pub results: PathBuf,
    /// The axis (column) along x.
    #[arg(long, value_name = "AXIS")]
    pub x: String,
    /// The metric (column) along y, e.g. waf or write_p99_us.
    #[arg(long, value_name = "METRIC")]
    pub y: String,
    /// An axis whose values get a line (or bar) each.
    #[arg(long, value_name = "AXIS")]
    pub hue: Option<String>,
    /// Keep only rows where AXIS has VALUE (repeatable); every other axis with several
    /// values must be fixed this way.
    #[arg(long = "where", value_name = "AXIS=VALUE")]
    pub filter: Vec<String>,
    /// The figure: FILE.png or FILE.svg (default: RESULTS/Y-by-X.png).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `ssdlab sweep-worker SPEC REPORT` (hidden): runs one spec for `ssdlab sweep`.
#[derive(Args, Debug)]
pub struct WorkerArgs {
    /// The run spec (JSON).
    pub spec: PathBuf,
    /// Where to write the report.
    pub report: PathBuf,
}
