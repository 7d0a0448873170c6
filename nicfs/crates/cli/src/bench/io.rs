//! `nicfs bench io`: read/write throughput by size, pattern and process count.

use std::time::Instant;

use anyhow::Result;
use clap::Args;
use nicfs_backend::BackendConfig;
use nicfs_pm::CostModel;

use super::ext4::Ext4Sys;
use super::list;
use super::systems::{InPlaceSys, NicfsSys, RawSys, System};
use nicfs::mount::scratch_dir;
use nicfs::rng::Rng;

/// Arguments of `nicfs bench io`.
#[derive(Args, Debug)]
pub struct IoArgs {
    /// Systems: nicfs, raw, inplace, ext4.
    #[arg(long, default_value = "nicfs,raw,inplace,ext4")]
    systems: String,
    /// I/O sizes in bytes.
    #[arg(long, default_value = "256,4096,16384")]
    sizes: String,
    /// Process counts.
    #[arg(long, default_value = "1,2,4")]
    procs: String,
    /// Operations per process per cell.
    #[arg(long, default_value_t = 2000)]
    ops: u64,
    /// File size per process in MiB.
    #[arg(long, default_value_t = 8)]
    file_mib: u64,
    /// Run without the PM cost model (functional speed only).
    #[arg(long)]
    no_cost: bool,
    /// Repetitions per cell; the median is reported.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Log data per NICFS front end in MiB (8: sustained, back-pressure; 256: burst).
    #[arg(long, default_value_t = 8)]
    log_mib: u64,
}

/// Removes a benchmark's PM file when the system under test is dropped.
struct Cleanup(std::path::PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn make(kind: &str, procs: usize, file: u64, cost: &CostModel, log_mib: u64) -> Result<Box<dyn System>> {
    let path = scratch_dir().join(format!("nicfs-bench-{kind}-{}", std::process::id()));
    Ok(match kind {
        "nicfs" => Box::new(NicfsSys::new(&path, procs, cost, BackendConfig::default(), "nicfs", log_mib)?),
        "raw" => Box::new(RawSys::new(&path, procs, file, cost)?),
        "inplace" => Box::new(InPlaceSys::new(&path, procs, cost)?),
        "ext4" => Box::new(Ext4Sys::new(&scratch_dir(), procs, file)?),
        other => anyhow::bail!("unknown system {other:?}"),
    })
}

/// Runs one cell; returns (ops/s, MB/s).
pub(crate) fn cell(
    sys: &dyn System,
    procs: usize,
    size: usize,
    write: bool,
    random: bool,
    ops: u64,
    file: u64,
) -> Result<(f64, f64)> {
    let slots = (file / size as u64).max(1);
    let start = Instant::now();
    std::thread::scope(|s| -> Result<()> {
        let hs: Vec<_> = (0..procs)
            .map(|p| {
                s.spawn(move || -> Result<()> {
                    let mut rng = Rng::new(p as u64 + 1);
                    let mut buf = vec![(p as u8).wrapping_add(1); size];
                    for i in 0..ops {
                        let slot = if random { rng.below(slots) } else { i % slots };
                        let off = slot * size as u64;
                        if write {
                            buf[0] = i as u8;
                            sys.write(p, off, &buf)?;
                        } else {
                            sys.read(p, off, &mut buf)?;
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        for h in hs {
            h.join().map_err(|_| anyhow::anyhow!("benchmark thread panicked"))??;
        }
        Ok(())
    })?;
    let secs = start.elapsed().as_secs_f64().max(1e-9);
    let total = (ops * procs as u64) as f64;
    Ok((total / secs, total * size as f64 / secs / 1e6))
}

/// Runs the matrix and prints a markdown table.
pub fn run(a: IoArgs) -> Result<()> {
    let cost = if a.no_cost { CostModel::free() } else { CostModel::default() };
    let sizes: Vec<usize> = list(&a.sizes)?;
    let procs: Vec<usize> = list(&a.procs)?;
    let file = a.file_mib << 20;
    println!("| system | procs | size | op | pattern | kops/s | MB/s |");
    println!("|---|---|---|---|---|---|---|");
    for kind in a.systems.split(',').map(str::trim) {
        for &p in &procs {
            let _cleanup = Cleanup(scratch_dir().join(format!("nicfs-bench-{kind}-{}", std::process::id())));
            let sys = match make(kind, p, file, &cost, a.log_mib) {
                Ok(s) => s,
                Err(e) => {
                    println!("| {kind} | {p} | - | - | - | skipped: {e} | |");
                    continue;
                }
            };
            // Prefill so that reads return data and writes overwrite.
            let chunk = 65536;
            cell(sys.as_ref(), p, chunk, true, false, file / chunk as u64, file)?;
            sys.settle()?;
            for &size in &sizes {
                for (write, random) in [(true, false), (true, true), (false, false), (false, true)] {
                    if !write {
                        sys.settle()?;
                    }
                    let mut runs = Vec::new();
                    for _ in 0..a.repeat.max(1) {
                        runs.push(cell(sys.as_ref(), p, size, write, random, a.ops, file)?);
                    }
                    let ops = super::drain::median(runs.iter().map(|r| r.0).collect());
                    let mbs = super::drain::median(runs.iter().map(|r| r.1).collect());
                    println!(
                        "| {} | {p} | {size} | {} | {} | {:.1} | {:.1} |",
                        sys.name(),
                        if write { "write" } else { "read" },
                        if random { "rand" } else { "seq" },
                        ops / 1e3,
                        mbs
                    );
                }
            }
        }
    }
    Ok(())
}
