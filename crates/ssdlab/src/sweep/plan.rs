//! From a sweep file to the list of runs, every one resolved to a [`RunSpec`] and checked, so
//! that bad input (an unknown key, an empty axis, a value of the wrong type) is one error
//! before any run starts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use firmware::config::DeviceConfig;
use host::workload::JobSpec;
use toml::Value;

use super::expand::{self, MAX_RUNS};
use super::file::{SweepFile, TableFormat};
use super::recipe::{Recipe, option_value, precondition, resolve, value_text, within};
use crate::setup::{
    DeviceError, JobOption, RunSpec, SetError, Setting, WorkloadError, apply_settings, load_device,
};

/// What an axis varies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// The device (a preset or a TOML file).
    Device,
    /// Blocks per plane (`--blocks`).
    Blocks,
    /// The preconditioning (`--precondition`).
    Precondition,
    /// A fio option of every job.
    Workload(String),
    /// A device setting by path (`--set`).
    Config(String),
}

/// One axis, its values expanded.
#[derive(Clone, Debug)]
pub struct Axis {
    /// The key as written; the axis's column name.
    pub key: String,
    /// What it varies.
    pub target: Target,
    /// Its values, in order.
    pub values: Vec<Value>,
}

/// One run of the sweep.
#[derive(Clone, Debug)]
pub struct PlannedRun {
    /// Its number, from 0, in sweep order.
    pub index: usize,
    /// Its value on every axis, in axis order.
    pub values: Vec<Value>,
    /// Its seed.
    pub seed: u64,
    /// What it runs.
    pub spec: RunSpec,
    /// [`RunSpec::hash`] of the spec.
    pub hash: String,
    /// The `ssdlab run` command that gives the same report.
    pub command: String,
}

/// What one run may use.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Budget {
    /// Wall-clock time.
    pub time: Option<Duration>,
    /// Resident memory, bytes.
    pub memory: Option<u64>,
}

/// A checked sweep: its axes and runs, and where and how to write the results.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The axes.
    pub axes: Vec<Axis>,
    /// The runs, in sweep order (points in order, each with every seed).
    pub runs: Vec<PlannedRun>,
    /// The results directory.
    pub out: PathBuf,
    /// The table's format.
    pub table: TableFormat,
    /// Local workers, if the file says.
    pub workers: Option<usize>,
    /// The budget of each run, as the file says.
    pub budget: Budget,
}

/// Why a run of the sweep could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The device could not be loaded or shrunk.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// A setting does not fit the device.
    #[error(transparent)]
    Set(#[from] SetError),
    /// The workload is not valid.
    #[error(transparent)]
    Workload(#[from] WorkloadError),
}

/// A sweep that cannot run, found before any run starts.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The sweep file is malformed.
    #[error(transparent)]
    File(#[from] super::file::FileError),
    /// A setting of the base run is wrong.
    #[error("base: {0}")]
    Base(String),
    /// An axis is wrong (its key, its values, one of its values).
    #[error("axis {key}: {message}")]
    Axis {
        /// The axis's key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A combination of values does not make a valid run.
    #[error("run {index} ({point}): {error}")]
    Run {
        /// The run's number.
        index: usize,
        /// Its axis values and seed.
        point: String,
        /// What is wrong.
        error: Box<SetupError>,
    },
    /// The seeds, the combination, the budget or the output are wrong.
    #[error("{0}")]
    Sweep(String),
}

impl Plan {
    /// Checks `file` and lists its runs. Relative paths in it are relative to `dir`;
    /// `default_out` is the results directory when the file names none.
    pub fn new(file: &SweepFile, dir: &Path, default_out: &Path) -> Result<Plan, PlanError> {
        let budget = budget(file)?;
        if file.workers == Some(0) {
            return Err(PlanError::Sweep("workers: must be at least 1 (got 0)".into()));
        }
        let base = Recipe::from_base(&file.base, dir).map_err(PlanError::Base)?;
        let mut devices = Devices::default();
        let base_cfg = devices.get(&base.device).map_err(|e| PlanError::Base(e.to_string()))?;
        apply_settings(&base_cfg, &base.sets).map_err(|e| PlanError::Base(format!("set {e}")))?;
        base.workload.jobs().map_err(|e| PlanError::Base(e.to_string()))?;

        let mut axes: Vec<Axis> = Vec::new();
        for a in &file.axis {
            let err = |message: String| PlanError::Axis { key: a.key.clone(), message };
            if axes.iter().any(|b| b.key == a.key) {
                return Err(err("listed twice".into()));
            }
            let target = target(&a.key).map_err(err)?;
            let values = expand::values(&a.values).map_err(err)?;
            for v in &values {
                check_value(&target, v, &base_cfg, dir, &mut devices)
                    .map_err(|m| err(format!("value {}: {m}", value_text(v))))?;
            }
            axes.push(Axis { key: a.key.clone(), target, values });
        }
        let seeds = expand::seeds(file.seeds.as_ref()).map_err(PlanError::Sweep)?;
        let lengths: Vec<usize> = axes.iter().map(|a| a.values.len()).collect();
        let points = expand::points(&lengths, file.combine).map_err(PlanError::Sweep)?;
        if points.len().saturating_mul(seeds.len()) > MAX_RUNS {
            return Err(PlanError::Sweep(format!("more than the {MAX_RUNS} runs a sweep may have")));
        }

        let mut runs = Vec::with_capacity(points.len() * seeds.len());
        for point in &points {
            let values: Vec<Value> = point.iter().zip(&axes).map(|(&i, a)| a.values[i].clone()).collect();
            for &seed in &seeds {
                let mut recipe = base.clone();
                recipe.seed = seed;
                for (axis, v) in axes.iter().zip(&values) {
                    apply(&mut recipe, axis, v, dir);
                }
                let index = runs.len();
                let spec = recipe.spec(&mut |name| devices.get(name)).map_err(|error| PlanError::Run {
                    index,
                    point: describe(&axes, &values, seed),
                    error: Box::new(error),
                })?;
                let hash = spec.hash();
                let command = recipe.command();
                runs.push(PlannedRun { index, values: values.clone(), seed, spec, hash, command });
            }
        }
        Ok(Plan {
            axes,
            runs,
            out: file.out.as_ref().map_or_else(|| default_out.to_path_buf(), |o| within(dir, o)),
            table: file.table,
            workers: file.workers,
            budget,
        })
    }
}

/// `ftl.op=0.2, workload.rw=randwrite, seed 1`.
pub fn describe(axes: &[Axis], values: &[Value], seed: u64) -> String {
    let mut parts: Vec<String> =
        axes.iter().zip(values).map(|(a, v)| format!("{}={}", a.key, value_text(v))).collect();
    parts.push(format!("seed {seed}"));
    parts.join(", ")
}

/// Loaded devices by name, so that a sweep reads each file once.
#[derive(Default)]
struct Devices(HashMap<String, DeviceConfig>);

impl Devices {
    fn get(&mut self, name: &str) -> Result<DeviceConfig, DeviceError> {
        if let Some(cfg) = self.0.get(name) {
            return Ok(cfg.clone());
        }
        let cfg = load_device(Some(name))?;
        self.0.insert(name.to_string(), cfg.clone());
        Ok(cfg)
    }
}

/// What `key` varies.
fn target(key: &str) -> Result<Target, String> {
    match key {
        "device" => Ok(Target::Device),
        "blocks" => Ok(Target::Blocks),
        "precondition" => Ok(Target::Precondition),
        "seed" | "seeds" => Err("seeds are not an axis: list them with `seeds = [...]`".into()),
        k => match k.strip_prefix("workload.") {
            Some(opt) if !opt.is_empty() && !opt.contains('.') => Ok(Target::Workload(opt.to_string())),
            Some(_) => Err("expected workload.OPTION, a fio option such as workload.rw".into()),
            None => Ok(Target::Config(k.to_string())),
        },
    }
}

/// Checks one value of an axis alone on the base device: its type and, for a device setting,
/// that the key exists (whether the device is valid is checked per run).
fn check_value(
    target: &Target,
    v: &Value,
    base: &DeviceConfig,
    dir: &Path,
    devices: &mut Devices,
) -> Result<(), String> {
    match target {
        Target::Device => match v {
            Value::String(name) => devices.get(&resolve(name, dir)).map(drop).map_err(|e| e.to_string()),
            _ => Err("expected a preset name or a file".into()),
        },
        Target::Blocks => match v {
            Value::Integer(n) if (1..=i64::from(u32::MAX)).contains(n) => Ok(()),
            _ => Err("expected a whole number of blocks per plane".into()),
        },
        Target::Precondition => match v {
            Value::String(p) => precondition(p).map(drop),
            _ => Err("expected none, seq-fill, random-fill or steady-state[:N]".into()),
        },
        Target::Workload(opt) => {
            let value = option_value(v)?;
            JobSpec::new("check").set(opt, value.as_deref()).map_err(|e| e.to_string())
        }
        Target::Config(path) => match apply_settings(base, &[Setting::new(path, v.clone())]) {
            Err(SetError::Invalid(_)) | Ok(_) => Ok(()),
            Err(e) => Err(e.to_string()),
        },
    }
}

/// Sets `axis` to `v` in `recipe` (checked by [`check_value`] before).
fn apply(recipe: &mut Recipe, axis: &Axis, v: &Value, dir: &Path) {
    match (&axis.target, v) {
        (Target::Device, Value::String(name)) => recipe.device = resolve(name, dir),
        (Target::Blocks, Value::Integer(n)) => recipe.blocks = Some(*n as u32),
        (Target::Precondition, Value::String(p)) => {
            recipe.precondition = precondition(p).expect("checked with the axis")
        }
        (Target::Workload(opt), v) => recipe.workload.options.push(JobOption {
            key: opt.clone(),
            value: option_value(v).expect("checked with the axis"),
            label: format!("axis {}", axis.key),
        }),
        (Target::Config(path), v) => recipe.sets.push(Setting::new(path, v.clone())),
        _ => unreachable!("axis values are checked before they are applied"),
    }
}

/// The budget of the sweep file.
fn budget(file: &SweepFile) -> Result<Budget, PlanError> {
    let time = match &file.budget.time {
        None => None,
        Some(t) => Some(parse_wall(t).map_err(|m| PlanError::Sweep(format!("budget.time: {m}")))?),
    };
    let memory = match &file.budget.memory {
        None => None,
        Some(m) => Some(
            m.parse::<sim::ByteSize>().map_err(|e| PlanError::Sweep(format!("budget.memory: {e}")))?.bytes(),
        ),
    };
    Ok(Budget { time, memory })
}

/// A wall-clock duration: a number above zero and `ms`, `s`, `m` or `h` (`90s`, `10m`,
/// `1.5h`).
pub fn parse_wall(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let not_one = || format!("`{text}` is not a duration such as 500ms, 90s, 10m or 1h");
    let scale = match unit.trim() {
        "ms" => 1e-3,
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(not_one()),
    };
    match n.parse::<f64>() {
        Ok(0.0) => Err(format!("must be positive (got `{text}`)")),
        Ok(v) => Duration::try_from_secs_f64(v * scale).map_err(|_| format!("`{text}` is too long")),
        Err(_) => Err(not_one()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_durations_say_what_is_wrong() {
        assert_eq!(parse_wall("1.5m"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_wall("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_wall("0s").unwrap_err(), "must be positive (got `0s`)");
        assert_eq!(parse_wall("0.0h").unwrap_err(), "must be positive (got `0.0h`)");
        assert_eq!(parse_wall("soon").unwrap_err(), "`soon` is not a duration such as 500ms, 90s, 10m or 1h");
        assert_eq!(parse_wall("-5s").unwrap_err(), "`-5s` is not a duration such as 500ms, 90s, 10m or 1h");
        assert_eq!(
            parse_wall(&format!("1{}h", "0".repeat(30))).unwrap_err(),
            format!("`1{}h` is too long", "0".repeat(30))
        );
    }
}
