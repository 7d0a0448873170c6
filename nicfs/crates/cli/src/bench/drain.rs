//! `nicfs bench drain`: how fast the back end applies logs, with 1, 2 and 4 front ends, and
//! the ablations (no index-block cache, no pipeline).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Args;
use nicfs_backend::{Backend, BackendConfig, DirectLink, open_with};
use nicfs_comm::CommRegion;
use nicfs_frontend::{Client, FrontendConfig};
use nicfs_layout::{FormatConfig, ROOT_INO, mode};
use nicfs_pm::CostModel;
use nicfs_store::mkfs;

use super::list;
use super::systems::timed_pm;
use nicfs::mount::scratch_dir;
use nicfs::rng::Rng;

/// Arguments of `nicfs bench drain`.
#[derive(Args, Debug)]
pub struct DrainArgs {
    /// Front-end counts.
    #[arg(long, default_value = "1,2,4")]
    fronts: String,
    /// MiB each front end logs before the back end starts.
    #[arg(long, default_value_t = 16)]
    mib: u64,
    /// Write size in bytes.
    #[arg(long, default_value_t = 4096)]
    size: usize,
    /// Random offsets (within a 64 MiB file) instead of sequential.
    #[arg(long)]
    random: bool,
    /// Variants: full, nocache, nopipeline.
    #[arg(long, default_value = "full,nocache,nopipeline")]
    variants: String,
    /// Override the DMA latency per transfer (ns).
    #[arg(long)]
    dma_ns: Option<u64>,
    /// Override the weak-core slowdown.
    #[arg(long)]
    slowdown: Option<f64>,
    /// Repetitions per cell; the median is reported.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
}

fn variant(name: &str, a: &DrainArgs) -> Result<BackendConfig> {
    let mut base = BackendConfig::default();
    if let Some(ns) = a.dma_ns {
        base.dma.latency_ns = ns;
    }
    if let Some(s) = a.slowdown {
        base.slowdown = s;
    }
    Ok(match name {
        "full" => base,
        "nocache" => BackendConfig { index_cache_lines: 0, ..base },
        "nopipeline" => BackendConfig { pipeline: false, ..base },
        other => anyhow::bail!("unknown variant {other:?}"),
    })
}

/// One measurement: front-end MB/s while logging, back-end MB/s while draining.
fn once(fronts: usize, a: &DrainArgs, cfg: BackendConfig) -> Result<(f64, f64)> {
    let path = scratch_dir().join(format!("nicfs-bench-drain-{}", std::process::id()));
    let per = a.mib << 20;
    let fmt = FormatConfig {
        size_bytes: (256 << 20) + 4 * (per + (8 << 20)),
        inodes: 1024,
        log_spaces: 4,
        log_headers: ((per / a.size as u64 + 64).next_power_of_two() as u32).max(64),
        log_data_bytes: per + (4 << 20),
        journal_blocks: 512,
    };
    let cost = CostModel::default();
    let pm = timed_pm(&path, fmt.size_bytes, &cost)?;
    mkfs(pm.as_ref(), &fmt, 1)?;
    let comm = Arc::new(CommRegion::anonymous()?);
    // Log with the back end idle (inline link, logs large enough: no drain happens).
    let t0 = Instant::now();
    {
        let (sh, _) = open_with(pm.clone(), comm.clone(), BackendConfig::free(), false)?;
        std::thread::scope(|s| -> Result<()> {
            let hs: Vec<_> = (0..fronts)
                .map(|f| {
                    let (pm, comm, sh) = (pm.clone(), comm.clone(), sh.clone());
                    s.spawn(move || -> Result<()> {
                        let link = Box::new(DirectLink::new(sh, f));
                        let c = Client::attach_with(pm, comm, f as u32, link, FrontendConfig::default())?;
                        let st = c.create(
                            ROOT_INO,
                            format!("d{f}").as_bytes(),
                            mode::S_IFREG | 0o644,
                            0,
                            0,
                            0,
                            b"",
                        )?;
                        let buf = vec![f as u8; a.size];
                        let mut rng = Rng::new(f as u64 + 7);
                        let n = per / a.size as u64;
                        for i in 0..n {
                            let off = if a.random { rng.below((64 << 20) / a.size as u64) } else { i }
                                * a.size as u64;
                            c.write(st.ino, off, &buf)?;
                        }
                        std::mem::forget(c); // keep the records in the log: no Goodbye drain
                        Ok(())
                    })
                })
                .collect();
            for h in hs {
                h.join().map_err(|_| anyhow::anyhow!("front end panicked"))??;
            }
            Ok(())
        })?;
    }
    let fe_secs = t0.elapsed().as_secs_f64();
    let bytes = (per * fronts as u64) as f64;
    let t1 = Instant::now();
    let be = Backend::start_with(pm.clone(), comm, cfg, false)?;
    let sh = be.shared().clone();
    while (0..fronts).any(|f| sh.head(f) < sh.tail(f)) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let be_secs = t1.elapsed().as_secs_f64();
    let st: Vec<f64> = sh
        .counters
        .stage_ns
        .iter()
        .map(|c| c.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e6)
        .collect();
    let hits = sh.cache_stats();
    eprintln!(
        "  stage ms (fetch/locate/merge/patch): {:.0}/{:.0}/{:.0}/{:.0}, batches {}, index cache hits {} misses {}",
        st[0],
        st[1],
        st[2],
        st[3],
        sh.counters.batches.load(std::sync::atomic::Ordering::Relaxed),
        hits.hits,
        hits.misses
    );
    be.stop();
    let _ = std::fs::remove_file(&path);
    Ok((bytes / fe_secs / 1e6, bytes / be_secs / 1e6))
}

pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Runs the drain matrix and prints a markdown table.
pub fn run(a: DrainArgs) -> Result<()> {
    let fronts: Vec<usize> = list(&a.fronts)?;
    println!("| variant | front ends | size | pattern | front-end MB/s (logging) | back-end drain MB/s |");
    println!("|---|---|---|---|---|---|");
    for v in a.variants.split(',').map(str::trim) {
        for &f in &fronts {
            let mut runs = Vec::new();
            for _ in 0..a.repeat.max(1) {
                runs.push(once(f, &a, variant(v, &a)?)?);
            }
            let (fe, be) =
                (median(runs.iter().map(|r| r.0).collect()), median(runs.iter().map(|r| r.1).collect()));
            println!(
                "| {v} | {f} | {} | {} | {fe:.1} | {be:.1} |",
                a.size,
                if a.random { "rand" } else { "seq" }
            );
        }
    }
    Ok(())
}
