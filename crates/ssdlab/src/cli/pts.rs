//! `ssdlab pts`: the SNIA PTS Enterprise IOPS and write-saturation tests.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{ShapeArgs, StoreArg};

/// `ssdlab pts [DEVICE] [--target T]`.
#[derive(Args, Debug)]
#[command(after_help = PTS_HELP)]
pub struct PtsArgs {
    /// A preset name or a TOML file to simulate (default: softssd). Not with --target.
    pub device: Option<String>,
    /// Test a live target through fio instead: a block device (/dev/nvme0n1), a file (O_DIRECT)
    /// or an NBD URI (nbd://127.0.0.1:10809, e.g. `ssdlab serve`). ITS DATA IS DESTROYED.
    #[arg(long, value_name = "TARGET", conflicts_with_all = ["device", "blocks", "set", "store"])]
    pub target: Option<String>,
    /// Confirm that a block device given to --target may be overwritten (TRIM of the whole
    /// device, then writes over all of it). Files and NBD URIs need no confirmation.
    #[arg(long, requires = "target")]
    pub destroy_data: bool,
    /// Which test: iops (rounds of 56 points to steady state), wsat (4 KiB random writes from
    /// a purged device: the write cliff) or both.
    #[arg(long, value_enum, default_value_t = PtsTest::Both)]
    pub test: PtsTest,
    /// Time of each IOPS point and each WSAT interval (simulated time on a simulated device),
    /// e.g. 60s, 500ms. Default: the spec's 60 s; anything else is reported as a departure.
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    pub point_time: String,
    /// Most IOPS rounds before giving up on steady state (the spec: 25).
    #[arg(long, default_value_t = 25)]
    pub max_rounds: usize,
    /// Jobs (thread count) of every step.
    #[arg(long, default_value_t = 4)]
    pub threads: u32,
    /// Commands in flight per job (outstanding I/O = threads x iodepth; default T4Q32).
    #[arg(long, default_value_t = 32)]
    pub iodepth: u32,
    /// WSAT stops once this many times the user capacity is written (the spec: 4).
    #[arg(long, default_value_t = 4.0, value_name = "N")]
    pub wsat_capacity_multiple: f64,
    /// WSAT also stops after this much test time (the spec: 24 hours), e.g. 10m.
    #[arg(long, value_name = "DURATION", default_value = "24h")]
    pub wsat_max_time: String,
    /// Directory for the figures (PNG and SVG) and pts.json (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write the full results as JSON to this file (default with --out: DIR/pts.json).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Seed of the simulation (the device and every step's random offsets).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where a simulated device keeps page data: metadata (tags only) or memory.
    #[arg(long, value_enum, default_value_t = StoreArg::Metadata)]
    pub store: StoreArg,
    /// The fio binary for --target.
    #[arg(long, value_name = "PATH", default_value = "fio")]
    pub fio: PathBuf,
    #[command(flatten)]
    pub shape: ShapeArgs,
}

/// Which PTS test to run.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum PtsTest {
    /// The IOPS test.
    Iops,
    /// The write-saturation test.
    Wsat,
    /// Both, the IOPS test first (each from its own purge).
    Both,
}

const PTS_HELP: &str = "What it runs (SNIA SSS PTS Enterprise v1.1; docs/pts.md):
  IOPS test  purge; precondition with sequential 128 KiB writes of twice the capacity; then
             rounds of random I/O at 7 R/W mixes (100/0 .. 0/100) x 8 block sizes (1024 KiB
             .. 512 B), each point --point-time, until the 4 KiB 100%-write IOPS of the last
             5 rounds is steady: max-min <= 20% of their average and the least-squares line's
             excursion <= 10% (at most --max-rounds rounds)
  WSAT       purge; 4 KiB random writes in intervals of --point-time until
             --wsat-capacity-multiple x the capacity is written: IOPS against time and data written

Purge: a simulated device is rebuilt factory-fresh; a live target gets a whole-range TRIM
through fio (rw=trim), and the output says whether it took it.

At the spec's 60 s points a round is 56 minutes; simulations usually run shorter points on a
shrunk device (each departure is printed and recorded in the JSON).

Examples:
  ssdlab pts consumer-tlc --blocks 86 --point-time 200ms --out pts-tlc/
  ssdlab pts mqsim-default --test wsat --point-time 1s --json wsat.json
  ssdlab pts --target nbd://127.0.0.1:10809 --point-time 5s --out pts-live/
  ssdlab pts --target /dev/nvme1n1 --destroy-data
                                              the spec's timing on a real drive (hours; erases it)";
