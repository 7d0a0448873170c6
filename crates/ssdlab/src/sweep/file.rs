//! The sweep file (`ssdlab sweep SWEEP.toml`): a base run, the axes to vary, the seeds, and how
//! to combine the axes. Read from TOML, or from JSON (the Python API's dicts).
//!
//! ```toml
//! combine = "grid"                  # every combination of the axes ("zip": the i-th values together)
//! seeds = [1, 2, 3]                 # or { from = 1, to = 3 }; default [1]
//! out = "op-gc-results"             # results directory, relative to this file
//!
//! [base]                            # one `ssdlab run`: every key optional
//! device = "softssd"                # preset or TOML file (relative to this file)
//! blocks = 64                       # --blocks
//! precondition = "steady-state"     # --precondition (none: a fresh device)
//! workload = { rw = "randwrite", bs = "4k", number_ios = 20000 }   # fio options, as the run flags
//! set = { "ftl.cache.capacity" = "16MiB" }                         # --set PATH=VALUE
//!
//! [[axis]]
//! key = "ftl.op"                    # a --set path, workload.OPTION, device, blocks or precondition
//! values = [0.07, 0.15, 0.28]       # or a range: { from = 0.1, to = 0.3, step = 0.1 }
//!
//! [budget]                          # per run; a run over budget is recorded as failed
//! time = "10m"                      # wall-clock time
//! memory = "4GiB"                   # resident memory
//! ```

use serde::Deserialize;
use toml::Value;

/// A whole sweep file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    /// The run every point of the sweep starts from. Default: `ssdlab run`'s defaults.
    #[serde(default)]
    pub base: Base,
    /// The axes, in order (the first varies slowest). Default: none (one point).
    #[serde(default)]
    pub axis: Vec<AxisSpec>,
    /// The seeds every point runs with. Default: `[1]`.
    #[serde(default)]
    pub seeds: Option<Values>,
    /// How the axes combine. Default: grid.
    #[serde(default)]
    pub combine: Combine,
    /// The results directory, relative to the sweep file. Default: the file's name without
    /// `.toml`, plus `-results`, beside it.
    #[serde(default)]
    pub out: Option<String>,
    /// The results table's format. Default: parquet.
    #[serde(default)]
    pub table: TableFormat,
    /// Local worker processes. Default: one per core.
    #[serde(default)]
    pub workers: Option<usize>,
    /// What one run may use.
    #[serde(default)]
    pub budget: BudgetSpec,
}

/// The base run: what `ssdlab run` would be given.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Base {
    /// A preset name or a device TOML file (relative to the sweep file). Default: softssd.
    #[serde(default)]
    pub device: Option<String>,
    /// Blocks per plane (`--blocks`). Default: the device's own.
    #[serde(default)]
    pub blocks: Option<u32>,
    /// `--precondition`: none, seq-fill, random-fill, steady-state or steady-state:N.
    /// Default: steady-state, as `ssdlab run`.
    #[serde(default)]
    pub precondition: Option<String>,
    /// A fio job file (relative to the sweep file). Default: the default job.
    #[serde(default)]
    pub job_file: Option<String>,
    /// fio options, as `ssdlab run`'s workload flags (`rw`, `bs`, `iodepth`, ...), on top of
    /// its defaults or applied to every job of the job file. Default: none.
    #[serde(default)]
    pub workload: toml::Table,
    /// Device settings by path (`--set`); nested tables are paths too. Default: none.
    #[serde(default)]
    pub set: toml::Table,
}

/// One axis of the sweep.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AxisSpec {
    /// What varies: a device path (`ftl.op`), `workload.OPTION`, `device`, `blocks` or
    /// `precondition`. It names the axis's column in the results.
    pub key: String,
    /// Its values.
    pub values: Values,
}

/// A list of values or a range.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged, expecting = "a list of values or a range { from = A, to = B, step = S }")]
pub enum Values {
    /// The values, in order.
    List(Vec<Value>),
    /// `from`, `from + step`, ... up to `to` inclusive.
    Range(RangeSpec),
}

/// A range of numbers, both ends included.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RangeSpec {
    /// The first value.
    pub from: Value,
    /// The last value (included if the steps reach it).
    pub to: Value,
    /// The step. Default: 1.
    #[serde(default)]
    pub step: Option<Value>,
}

/// How axes combine into points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Combine {
    /// Every combination (the first axis varies slowest).
    #[default]
    Grid,
    /// The i-th values of every axis together (all axes as long).
    Zip,
}

/// The results table's format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableFormat {
    /// `results.parquet`.
    #[default]
    Parquet,
    /// `results.csv`.
    Csv,
}

/// What one run may use; over budget, it is killed and recorded as failed.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetSpec {
    /// Wall-clock time, e.g. `90s`, `10m`, `1h`. Default: none.
    #[serde(default)]
    pub time: Option<String>,
    /// Resident memory, e.g. `4GiB`. Default: the machine's memory shared by the workers.
    #[serde(default)]
    pub memory: Option<String>,
}

/// A sweep file that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{origin}{}: {message}", position.map_or(String::new(), |(l, c)| format!(":{l}:{c}")))]
pub struct FileError {
    /// The file, or `sweep` for a dict.
    pub origin: String,
    /// Line and column, where known.
    pub position: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
}

impl SweepFile {
    /// Parses TOML; `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<SweepFile, FileError> {
        toml::from_str(text).map_err(|e| FileError {
            origin: origin.to_string(),
            position: e.span().map(|s| line_col(text, s.start)),
            message: e.message().trim().to_string(),
        })
    }

    /// Reads the sweep file at `path`; also returns the directory its relative paths start
    /// from and the default results directory (`NAME-results` beside it).
    pub fn load(
        path: &std::path::Path,
    ) -> Result<(SweepFile, std::path::PathBuf, std::path::PathBuf), FileError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| FileError {
            origin: origin.clone(),
            position: None,
            message: e.to_string(),
        })?;
        let file = SweepFile::from_toml(&text, &origin)?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        let stem = path.file_stem().map_or("sweep".into(), |s| s.to_string_lossy().into_owned());
        let out = if dir == std::path::Path::new(".") {
            format!("{stem}-results").into()
        } else {
            dir.join(format!("{stem}-results"))
        };
        Ok((file, dir, out))
    }

    /// Parses JSON of the same shape (what the Python API sends for a dict).
    pub fn from_json(text: &str, origin: &str) -> Result<SweepFile, FileError> {
        serde_json::from_str(text).map_err(|e| FileError {
            origin: origin.to_string(),
            position: None,
            message: e.to_string(),
        })
    }
}

/// 1-based line and column of byte offset `at` in `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    (line, before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_example_parses() {
        let doc = include_str!("file.rs");
        let example: String = doc
            .lines()
            .skip_while(|l| !l.starts_with("//! ```toml"))
            .skip(1)
            .take_while(|l| !l.starts_with("//! ```"))
            .map(|l| format!("{}\n", l.trim_start_matches("//!").trim_start()))
            .collect();
        let f = SweepFile::from_toml(&example, "doc").unwrap();
        assert_eq!(f.axis.len(), 1);
        assert_eq!(f.base.workload.len(), 3);
        assert_eq!(f.budget.time.as_deref(), Some("10m"));
    }

    #[test]
    fn unknown_keys_and_bad_values_are_placed() {
        let e = SweepFile::from_toml("[base]\ndevise = 'x'\n", "s.toml").unwrap_err().to_string();
        assert!(e.starts_with("s.toml:2:1: unknown field `devise`"), "{e}");
        let e =
            SweepFile::from_toml("[[axis]]\nkey = 'ftl.op'\nvalues = 3\n", "s.toml").unwrap_err().to_string();
        assert!(e.contains("a list of values or a range"), "{e}");
        let e = SweepFile::from_toml("combine = 'cross'\n", "s.toml").unwrap_err().to_string();
        assert!(e.contains("unknown variant `cross`"), "{e}");
        let j =
            SweepFile::from_json(r#"{"axis": [{"key": "ftl.op", "values": [0.1, 0.2]}]}"#, "sweep").unwrap();
        assert_eq!(j.axis[0].key, "ftl.op");
    }
}
