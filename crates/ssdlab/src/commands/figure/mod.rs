//! `ssdlab figure NAME`: regenerate a paper's figures by simulation, each measured value beside
//! the published one (PRESETS.md), with the reports and plots of the runs behind them.

mod hostftl_array;
mod lab;
mod pcie_study;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

/// `ssdlab figure NAME [--out DIR] [--quick]`.
#[derive(Args, Debug)]
pub struct FigureArgs {
    #[command(subcommand)]
    pub figure: FigureCmd,
}

/// The papers ssdlab can regenerate.
#[derive(Subcommand, Debug)]
pub enum FigureCmd {
    /// The FPGA storage array with a host-side FTL: write bandwidth with and without
    /// super-page writes, read bandwidth by block size, 4 KiB random IOPS by read/write mix,
    /// small reads by queue depth, and host-directed write allocation.
    HostftlArray(FigureOpts),
    /// The PCIe SSD design study (FSSD vs BSSD, with a SATA SSD for power): host memory and
    /// CPU, queued vs legacy latency, scaling with workers, the GC write cliff, power.
    PcieStudy(FigureOpts),
}

/// Options every figure takes.
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

pub fn run(a: FigureArgs) -> Result<()> {
    match a.figure {
        FigureCmd::HostftlArray(o) => hostftl_array::run(&o),
        FigureCmd::PcieStudy(o) => pcie_study::run(&o),
    }
}
