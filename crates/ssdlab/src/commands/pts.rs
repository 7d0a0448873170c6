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
    let json = a.json.clone().or_else(|| a.out.as_ref().map(|d| d.join("pts.json")));
    let mut obs = Lines {
        bar: None,
        started: std::time::Instant::now(),
        partial: json.as_ref().map(|path| Partial::new(path, &ex.describe(), ex.capacity())),
    };
    let report = pts::run(ex.as_mut(), &settings, &mut obs);
    if let Some(bar) = obs.bar.take() {
        bar.finish();
    }
    let report = match (report, &json) {
        (Ok(r), _) => r,
        (Err(e), Some(path)) if obs.partial.as_ref().is_some_and(|p| p.written) => {
            bail!("{e} (what was measured before is in {}, marked \"complete\": false)", path.display())
        }
        (Err(e), _) => return Err(e.into()),
    };
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

/// Progress on stderr: a line per phase and round, a bar for the steps of a round; and what
/// was measured so far, kept in the JSON file as the run goes.
struct Lines {
    bar: Option<Progress>,
    started: std::time::Instant,
    partial: Option<Partial>,
}

/// The JSON file of a run that has not finished: `"complete": false`, the target, and the IOPS
/// rounds and WSAT intervals measured so far. Rewritten (through a temporary file and a rename,
/// so that an interruption leaves the last whole version) after every IOPS round and at most
/// every few seconds of WSAT intervals; the finished report replaces it.
struct Partial {
    path: std::path::PathBuf,
    target: String,
    capacity_bytes: u64,
    /// The IOPS rounds (kept for the writes during the WSAT, which comes after them).
    rounds: Vec<pts::Round>,
    /// When WSAT intervals were last written, and the seconds between two such writes.
    last_interval: Option<std::time::Instant>,
    every_s: f64,
    written: bool,
    warned: bool,
}

impl Partial {
    /// Seconds between two writes while WSAT intervals come in.
    const WSAT_EVERY_S: f64 = 5.0;

    fn new(path: &std::path::Path, target: &str, capacity_bytes: u64) -> Self {
        Partial {
            path: path.to_path_buf(),
            target: target.to_string(),
            capacity_bytes,
            rounds: Vec::new(),
            last_interval: None,
            every_s: Self::WSAT_EVERY_S,
            written: false,
            warned: false,
        }
    }

    /// Takes what the run reports and writes the file if it is due.
    fn update(&mut self, rounds: &[pts::Round], intervals: &[pts::Interval]) {
        if !rounds.is_empty() {
            self.rounds = rounds.to_vec();
            self.write(&[]);
        } else if self.last_interval.is_none_or(|t| t.elapsed().as_secs_f64() >= self.every_s) {
            self.last_interval = Some(std::time::Instant::now());
            self.write(intervals);
        }
    }

    fn write(&mut self, intervals: &[pts::Interval]) {
        /// The file's contents, borrowed.
        #[derive(serde::Serialize)]
        struct Unfinished<'a> {
            complete: bool,
            spec: &'a str,
            target: &'a str,
            capacity_bytes: u64,
            iops_rounds: &'a [pts::Round],
            wsat_intervals: &'a [pts::Interval],
        }
        let value = Unfinished {
            complete: false,
            spec: pts::SPEC,
            target: &self.target,
            capacity_bytes: self.capacity_bytes,
            iops_rounds: &self.rounds,
            wsat_intervals: intervals,
        };
        let tmp = self.path.with_extension("partial");
        let written = serde_json::to_string_pretty(&value)
            .map_err(std::io::Error::other)
            .and_then(|text| std::fs::write(&tmp, text + "\n"))
            .and_then(|()| std::fs::rename(&tmp, &self.path));
        match written {
            Ok(()) => self.written = true,
            // Keeping a copy must not end a run that may have hours to go: say so once.
            Err(e) if !self.warned => {
                eprintln!("ssdlab pts: could not write {}: {e}", self.path.display());
                self.warned = true;
            }
            Err(_) => {}
        }
    }
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

    fn measured(&mut self, rounds: &[pts::Round], intervals: &[pts::Interval]) {
        if let Some(p) = &mut self.partial {
            p.update(rounds, intervals);
        }
    }
}

/// Whether `path` is a block device.
fn is_block_device(path: &std::path::Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).map(|m| m.file_type().is_block_device()).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &std::path::Path) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn an_unfinished_run_keeps_what_it_measured() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pts.json");
        let mut p = Partial::new(&path, "a device", 1 << 30);
        p.every_s = f64::INFINITY; // intervals after the first are never due: no clock in the test
        let round = |n| pts::Round { round: n, tracking_iops: 1000.0 * n as f64, points: Vec::new() };
        p.update(&[round(1)], &[]);
        let v = read(&path);
        assert_eq!(v["complete"], false);
        assert_eq!(v["target"], "a device");
        assert_eq!(v["iops_rounds"].as_array().unwrap().len(), 1);
        p.update(&[round(1), round(2)], &[]);
        assert_eq!(read(&path)["iops_rounds"][1]["tracking_iops"], 2000.0, "every round is written");
        let interval = |index| pts::Interval { index, time_s: index as f64, bytes_written: 4096, iops: 1.0 };
        p.update(&[], &[interval(1)]);
        p.update(&[], &[interval(1), interval(2)]);
        let v = read(&path);
        assert_eq!(
            v["wsat_intervals"].as_array().unwrap().len(),
            1,
            "intervals are written at most every few seconds"
        );
        assert_eq!(v["iops_rounds"].as_array().unwrap().len(), 2, "the rounds stay");
        assert!(!path.with_extension("partial").exists(), "written through a temporary file");
    }
}
