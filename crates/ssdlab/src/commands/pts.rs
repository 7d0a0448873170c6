//! `ssdlab pts`: the SNIA PTS Enterprise IOPS and write-saturation tests on a simulated device
//! or a live target.

use anyhow::{Context, Result, bail};
use firmware::platform::StoreChoice;
use ssdlab::pts::{self, Executor, Observer, Settings, plan::parse_seconds};

use crate::cli::{PtsArgs, PtsTest, StoreArg};
use crate::output_paths;
use crate::progress::Progress;

pub fn run(a: PtsArgs) -> Result<()> {
    let settings = settings(&a)?;
    settings.validate().map_err(anyhow::Error::msg)?;
    if let Some(path) = &a.json {
        output_paths::file("--json", path)?;
    }
    if let Some(dir) = &a.out {
        output_paths::dir("--out", dir)?;
    }
    // fio's JSON goes here, for as long as the run lasts.
    let mut scratch = None;
    let mut ex: Box<dyn Executor> = match &a.target {
        Some(t) => {
            let target = pts::Target::parse(t);
            if let pts::Target::Path(p) = &target
                && is_block_device(p)
                && !a.destroy_data
            {
                bail!(
                    "{} is a block device: the PTS TRIMs and overwrites all of it; add --destroy-data if that is meant",
                    p.display()
                );
            }
            let dir = scratch.insert(tempfile::tempdir().context("creating a directory for fio's output")?);
            Box::new(pts::Fio::new(a.fio.clone(), target, dir.path())?)
        }
        None => {
            let cfg = super::run::shaped(a.device.as_deref(), &a.shape)?;
            let store = match a.store {
                StoreArg::Metadata => StoreChoice::Metadata,
                StoreArg::Memory => StoreChoice::Memory,
                StoreArg::Image => bail!("ssdlab pts simulates with --store metadata or memory"),
            };
            Box::new(pts::Simulated::new(cfg, store, a.seed)?)
        }
    };
    eprintln!("ssdlab pts: {}", ex.describe());
    let mut obs = Lines { bar: None, started: std::time::Instant::now() };
    let report = pts::run(ex.as_mut(), &settings, &mut obs)?;
    if let Some(bar) = obs.bar.take() {
        bar.finish();
    }
    let json = a.json.clone().or_else(|| a.out.as_ref().map(|d| d.join("pts.json")));
    if let Some(dir) = &a.out {
        let files = pts::write_charts(&report, dir)?;
        eprintln!("{} figures in {}", files.len(), dir.display());
    }
    if let Some(path) = &json {
        super::write_json(path, &report)?;
        eprintln!("results in {}", path.display());
    }
    print!("{}", pts::text(&report));
    Ok(())
}

/// The validated settings from the flags.
fn settings(a: &PtsArgs) -> Result<Settings> {
    Ok(Settings {
        point_seconds: parse_seconds("--point-time", &a.point_time).map_err(anyhow::Error::msg)?,
        max_rounds: a.max_rounds,
        threads: a.threads,
        iodepth: a.iodepth,
        iops: a.test != PtsTest::Wsat,
        wsat: a.test != PtsTest::Iops,
        wsat_capacity_multiple: a.wsat_capacity_multiple,
        wsat_max_seconds: parse_seconds("--wsat-max-time", &a.wsat_max_time).map_err(anyhow::Error::msg)?,
        precondition_loops: 2,
    })
}

/// Progress on stderr: a line per phase and round, a bar for the steps of a round.
struct Lines {
    bar: Option<Progress>,
    started: std::time::Instant,
}

impl Observer for Lines {
    fn note(&mut self, line: &str) {
        if let Some(bar) = self.bar.take() {
            bar.finish();
        }
        eprintln!("[{:>6.0} s] {line}", self.started.elapsed().as_secs_f64());
    }

    fn step(&mut self, done: u64, total: u64) {
        self.bar.get_or_insert_with(|| Progress::new("steps")).update(done, total);
    }
}

/// Whether `path` is a block device.
fn is_block_device(path: &std::path::Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).map(|m| m.file_type().is_block_device()).unwrap_or(false)
}
