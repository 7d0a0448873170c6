//! `nicfs figure`: the NICFS paper's figures regenerated in virtual time (the `nicfs-timed`
//! model), each value beside the published one.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand};
use nicfs_timed::TimedConfig;
use nicfs_timed::figures::{
    Row, Scale, backend, front_end_map, paper, render, render_throughput, throughput, throughput_rows,
};

/// Arguments of `nicfs figure`.
#[derive(Args, Debug)]
pub struct FigureArgs {
    #[command(subcommand)]
    which: Which,
    /// A TOML model configuration (see `TimedConfig`; every field has a cited default).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// Seed of the workloads' random offsets.
    #[arg(long, global = true, default_value_t = 1)]
    seed: u64,
    /// A small scale (seconds instead of minutes; the shapes, not the numbers).
    #[arg(long, global = true)]
    small: bool,
}

#[derive(Subcommand, Debug)]
enum Which {
    /// Every figure: throughput against the kernel baselines, back end against front end,
    /// one/two/four front ends, without the index-block cache, without the pipeline.
    Paper,
    /// Figure 1 only (throughput by size against the baselines).
    Throughput,
    /// Figures 2-5 only (the back end).
    Backend,
    /// Where figure 3's shapes hold (two front ends x2, four below two): the ratios against the
    /// NIC's context-switch cost (0-30 us) and its core speed (1-4 NIC cycles per host cycle),
    /// neither stated by the paper (nicfs/BENCHMARKS.md has the measured map).
    Map,
    /// Prints the model's configuration (defaults, or --config) as TOML.
    Config,
    /// Measures this implementation's CPU costs on this machine (wall clock; not
    /// deterministic) and prints them as the model's `[cpu]` section.
    Calibrate,
}

/// Runs `nicfs figure`.
pub fn run(a: FigureArgs) -> Result<()> {
    let cfg: TimedConfig = match &a.config {
        Some(p) => toml::from_str(&std::fs::read_to_string(p)?)
            .with_context(|| format!("parsing {}", p.display()))?,
        None => TimedConfig::default(),
    };
    cfg.validate()?;
    let scale = if a.small { Scale::small() } else { Scale::paper() };
    let e = |x: String| anyhow!(x);
    let rows: Vec<Row> = match a.which {
        Which::Paper => {
            let (t, rows) = paper(&cfg, &scale, a.seed).map_err(e)?;
            println!("## Figure 1: throughput\n\n{}", render_throughput(&t));
            rows
        }
        Which::Throughput => {
            let t = throughput(&cfg, &scale, a.seed).map_err(e)?;
            println!("## Figure 1: throughput\n\n{}", render_throughput(&t));
            throughput_rows(&t)
        }
        Which::Backend => backend(&cfg, &scale, a.seed).map_err(e)?,
        Which::Map => {
            print!("{}", front_end_map(&cfg, &scale, a.seed).map_err(e)?);
            return Ok(());
        }
        Which::Config => {
            print!("{}", toml::to_string(&cfg)?);
            return Ok(());
        }
        Which::Calibrate => {
            let cpu = nicfs_timed::calibrate::measure(cfg.host.clock_mhz).map_err(|e| anyhow!(e))?;
            println!("# measured at a host clock of {} MHz", cfg.host.clock_mhz);
            print!("[cpu]\n{}", toml::to_string(&cpu)?);
            return Ok(());
        }
    };
    println!("## Against the published values\n\n{}", render(&rows));
    let off = rows.iter().filter(|r| !r.same_direction).count();
    println!("\n{} rows, {off} not in the published direction (see nicfs/BENCHMARKS.md for why)", rows.len());
    if rows.is_empty() {
        bail!("no figure rows");
    }
    Ok(())
}
