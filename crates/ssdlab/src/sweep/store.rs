//! The results directory of a sweep:
//!
//! ```text
//!   OUT/results.parquet        the table (or results.csv)
//!   OUT/sweep.json             the same table as JSON (for `ssdlab sweep plot` and Python)
//!   OUT/runs/HASH.json         the full report of a run that completed (as `ssdlab run --json`)
//!   OUT/runs/HASH.failed.json  {"error": "..."} of a run that failed
//!   OUT/tmp/                   scratch files of the runs in progress
//! ```
//!
//! A run is named by the content hash of its inputs ([`crate::setup::RunSpec::hash`]), so a
//! result on disk is a result of exactly these inputs: rerunning a sweep skips it.

use std::io;
use std::path::{Path, PathBuf};

use super::file::TableFormat;
use super::table::{RunResult, Table};

/// A file of the results directory that could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct StoreError {
    /// The file or directory.
    pub path: PathBuf,
    /// What the OS said.
    pub source: io::Error,
}

/// The report of the run with `hash`, relative to the results directory.
pub fn report_path(hash: &str) -> String {
    format!("runs/{hash}.json")
}

/// A sweep's results directory.
#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
}

fn at(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError { path: path.to_path_buf(), source }
}

/// Writes `bytes` to `path` through a temporary file and a rename, so that a reader (or a
/// sweep interrupted mid-write) never sees half a file.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let tmp = path.with_extension("partial");
    std::fs::write(&tmp, bytes).map_err(at(&tmp))?;
    std::fs::rename(&tmp, path).map_err(at(path))
}

impl Store {
    /// Opens (creating) the results directory `dir`.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        for d in [dir.join("runs"), dir.join("tmp")] {
            std::fs::create_dir_all(&d).map_err(at(&d))?;
        }
        Ok(Store { dir: dir.to_path_buf() })
    }

    /// The results directory `dir` as it is, created or not (for looking up results).
    pub fn existing(dir: &Path) -> Store {
        Store { dir: dir.to_path_buf() }
    }

    /// Scratch space for the runs in progress.
    pub fn scratch(&self) -> PathBuf {
        self.dir.join("tmp")
    }

    fn failed_path(&self, hash: &str) -> PathBuf {
        self.dir.join(format!("runs/{hash}.failed.json"))
    }

    /// The stored result of the run with `hash`, if any. A report that does not read back (a
    /// file edited by hand, another schema) counts as none, so the run is done again.
    pub fn lookup(&self, hash: &str) -> Option<RunResult> {
        if let Ok(report) = report::compare::read_report(&self.dir.join(report_path(hash))) {
            return Some(RunResult::of(&report));
        }
        let text = std::fs::read_to_string(self.failed_path(hash)).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        Some(RunResult::Failed(v.get("error")?.as_str()?.to_string()))
    }

    /// Saves a completed run's report (JSON text, as a worker wrote it).
    pub fn save_report(&self, hash: &str, text: &str) -> Result<(), StoreError> {
        write_atomic(&self.dir.join(report_path(hash)), text.as_bytes())?;
        let _ = std::fs::remove_file(self.failed_path(hash));
        Ok(())
    }

    /// Saves why a run failed.
    pub fn save_failure(&self, hash: &str, error: &str) -> Result<(), StoreError> {
        let text = serde_json::to_string_pretty(&serde_json::json!({ "error": error })).expect("JSON");
        write_atomic(&self.failed_path(hash), format!("{text}\n").as_bytes())
    }

    /// Where the table goes in `format`.
    pub fn table_path(&self, format: TableFormat) -> PathBuf {
        self.dir.join(match format {
            TableFormat::Parquet => "results.parquet",
            TableFormat::Csv => "results.csv",
        })
    }

    /// Writes the table in `format` and as `sweep.json`; returns the table's path.
    pub fn write_table(&self, table: &Table, format: TableFormat) -> Result<PathBuf, StoreError> {
        let path = self.table_path(format);
        match format {
            TableFormat::Parquet => write_atomic(&path, &super::parquet::to_parquet(table))?,
            TableFormat::Csv => write_atomic(&path, super::csv::to_csv(table).as_bytes())?,
        }
        let json = serde_json::to_string(table).expect("a table serialises");
        write_atomic(&self.dir.join("sweep.json"), format!("{json}\n").as_bytes())?;
        Ok(path)
    }
}

/// Reads `sweep.json` from a results directory, or from beside a table file.
pub fn read_table(results: &Path) -> Result<Table, StoreError> {
    if !results.exists() {
        let source = io::Error::new(
            io::ErrorKind::NotFound,
            "not found (expected a sweep's results directory or table)",
        );
        return Err(StoreError { path: results.to_path_buf(), source });
    }
    let path = match results.parent() {
        _ if results.is_dir() => results.join("sweep.json"),
        Some(dir) if !dir.as_os_str().is_empty() => dir.join("sweep.json"),
        _ => Path::new(".").join("sweep.json"),
    };
    let text = std::fs::read_to_string(&path).map_err(at(&path))?;
    let table: Table = serde_json::from_str(&text).map_err(|e| StoreError {
        path: path.clone(),
        source: io::Error::new(io::ErrorKind::InvalidData, format!("not a sweep table: {e}")),
    })?;
    if table.schema != super::table::SWEEP_SCHEMA {
        let source = io::Error::new(
            io::ErrorKind::InvalidData,
            format!("schema {:?} is not {:?}", table.schema, super::table::SWEEP_SCHEMA),
        );
        return Err(StoreError { path, source });
    }
    Ok(table)
}
