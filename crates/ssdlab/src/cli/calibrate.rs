//! The arguments of `ssdlab calibrate`.

use std::path::PathBuf;

use clap::Args;

#[derive(Args, Debug)]
#[command(after_help = CALIBRATE_EXAMPLES)]
pub struct CalibrateArgs {
    /// What to measure: a block device, a regular file (O_DIRECT through libaio), or an NBD
    /// URI (fio's nbd engine). It is written over (its first --plan region).
    pub target: String,
    /// The preset (or TOML file) whose parameters are fitted. Default: softssd.
    #[arg(long, value_name = "PRESET")]
    pub from: Option<String>,
    /// Where to write the fitted configuration (a TOML file `ssdlab run FILE` reads).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Where to write the report as JSON. Default: OUT with `.report.json` for `.toml`.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// The parameters to fit, by configuration path, comma-separated. Default: timing.t_read,
    /// t_prog, t_erase, channel_mts, host.link.dma_setup, host.costs.fetch and completion.
    #[arg(long, value_delimiter = ',', value_name = "PATH,...")]
    pub fit: Vec<String>,
    /// The measurement plan, a TOML file (region, runtime, ramp, [[point]] rw/bs/iodepth).
    /// Default: 26 points of 5 s in 1 GiB (randread/randwrite 4 KiB at QD 1-128 and 16 KiB-1 MiB
    /// at QD1, read/write 128 KiB and 1 MiB at QD 1 and 32).
    #[arg(long, value_name = "FILE", conflicts_with = "quick")]
    pub plan: Option<PathBuf>,
    /// A plan of six 1 s points in 32 MiB (random 4 KiB and 64 KiB reads, 1 MiB sequential
    /// reads, random 4 KiB and sequential 128 KiB writes).
    #[arg(long)]
    pub quick: bool,
    /// Longest the measurement may take (wall clock, e.g. 10m); a plan that cannot fit is
    /// refused before anything runs.
    #[arg(long, default_value = "10m", value_parser = super::serve::humantime_secs)]
    pub budget: std::time::Duration,
    /// The target runs this many times slower than real time (a served device's --dilation):
    /// measured times are divided by it and IOPS multiplied.
    #[arg(long, default_value_t = 1.0)]
    pub dilation: f64,
    /// Refit a measurement saved in an earlier report (its `measurement`) instead of running
    /// fio; the target is then only a label.
    #[arg(long, value_name = "REPORT.json")]
    pub measured: Option<PathBuf>,
    /// The metrics the fit compares, comma-separated: iops, mean, p99 (latency). All are
    /// reported either way.
    #[arg(long, value_delimiter = ',', default_value = "iops,mean,p99")]
    pub metrics: Vec<String>,
    /// Each parameter stays within its starting value divided or multiplied by this.
    #[arg(long, default_value_t = 10.0)]
    pub bound: f64,
    /// The most Nelder-Mead iterations.
    #[arg(long, default_value_t = 150)]
    pub max_iters: u64,
    /// Commands each simulated point runs (at least 32 per command in flight).
    #[arg(long, default_value_t = 1000)]
    pub sim_ios: u64,
    /// Blocks per plane of the simulated device (as `serve --blocks`; the default is serve's).
    #[arg(long)]
    pub blocks: Option<u32>,
    /// Change a setting of the starting configuration first (repeatable), as `run --set`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Simulations run at once. Default: the machine's cores.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Seed of the simulations.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The fio program.
    #[arg(long, value_name = "PATH", default_value = "fio")]
    pub fio: PathBuf,
    /// Write to a target that holds a file system or partition table (its data is lost).
    #[arg(long)]
    pub force_overwrite: bool,
}

const CALIBRATE_EXAMPLES: &str = "Examples:
  fallocate -l 2G /var/tmp/cal.img
  ssdlab calibrate /var/tmp/cal.img --from consumer-tlc --out my-drive.toml --budget 5m
  ssdlab run my-drive.toml --rw randread --iodepth 32      the fitted model
  ssdlab serve --unix /tmp/s.sock --dilation 10 --set timing.t_read=130us &
  ssdlab calibrate 'nbd+unix:///?socket=/tmp/s.sock' --dilation 10 --quick \\
      --fit timing.t_read,timing.channel_mts --out back.toml
  ssdlab calibrate X --measured my-drive.report.json --fit timing.t_read --out refit.toml";
