//! The functions of `ssdlab._native`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use firmware::config::DeviceConfig;
use pyo3::prelude::*;
use serde::Deserialize;
use ssdlab::setup::{RunSpec, load_device};
use ssdlab::sweep::{
    BackendChoice, Base, Budget, Plan, Recipe, Running, SweepError, SweepFile, SweepOptions, TableFormat,
    WorkerCommand, describe, execute, parse_wall,
};

use crate::SsdlabError;

/// An error as the Python exception.
fn fail(e: impl std::fmt::Display) -> PyErr {
    SsdlabError::new_err(e.to_string())
}

/// The version of the ssdlab crates in this module.
#[pyfunction]
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The built-in device presets.
#[pyfunction]
pub fn presets() -> Vec<&'static str> {
    firmware::presets::names().collect()
}

/// `ssdlab.run`'s request: a sweep's base run, a seed, and the device inline if not named.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunRequest {
    base: Base,
    seed: u64,
    dir: PathBuf,
    #[serde(default)]
    device_toml: Option<String>,
    #[serde(default)]
    device_config: Option<serde_json::Value>,
}

/// The spec of a run request.
fn run_spec(text: &str) -> Result<RunSpec, String> {
    let req: RunRequest = serde_json::from_str(text).map_err(|e| format!("bad request: {e}"))?;
    let mut recipe = Recipe::from_base(&req.base, &req.dir)?;
    recipe.seed = req.seed;
    let inline = match (&req.device_toml, req.device_config) {
        (Some(text), _) => Some(DeviceConfig::from_toml(text, "device").map_err(|e| e.to_string())?),
        (None, Some(v)) => {
            let cfg: DeviceConfig = serde_json::from_value(v).map_err(|e| format!("device: {e}"))?;
            cfg.validate().map_err(|e| format!("device: {e}"))?;
            Some(cfg)
        }
        (None, None) => None,
    };
    recipe
        .spec(&mut |name| match &inline {
            Some(cfg) => Ok(cfg.clone()),
            None => load_device(Some(name)),
        })
        .map_err(|e| e.to_string())
}

/// Runs a request (JSON, see `python/ssdlab/__init__.py`) and returns the report as JSON.
#[pyfunction]
pub fn run(py: Python<'_>, request: String) -> PyResult<String> {
    py.detach(move || {
        let spec = run_spec(&request)?;
        let report = spec.execute().map_err(|e| e.to_string())?;
        Ok(serde_json::to_string(&report).expect("a report serialises"))
    })
    .map_err(|e: String| fail(e))
}

/// Calibrates (a JSON `ssdlab::calibrate::Request`, see `python/ssdlab/__init__.py`) and
/// returns `{"report": ..., "fitted_toml": ...}` as JSON; progress lines go to standard error.
#[pyfunction]
pub fn calibrate(py: Python<'_>, request: String) -> PyResult<String> {
    py.detach(move || {
        let req: ssdlab::calibrate::Request =
            serde_json::from_str(&request).map_err(|e| format!("bad request: {e}"))?;
        let c = ssdlab::calibrate::calibrate(&req, &mut |line| eprintln!("{line}"), &mut |_| Ok(()))
            .map_err(|e| e.to_string())?;
        Ok(serde_json::json!({ "report": c.report, "fitted_toml": c.fitted_toml }).to_string())
    })
    .map_err(|e: String| fail(e))
}

/// The plan of a sweep given as a file path (`kind` "path"), TOML text ("toml") or JSON
/// ("json"); relative paths in text start at `dir`.
fn load_plan(source: &str, kind: &str, dir: &Path, out: Option<&str>) -> Result<Plan, String> {
    let (file, dir, default_out) = match kind {
        "path" => SweepFile::load(Path::new(source)).map_err(|e| e.to_string())?,
        "toml" => (
            SweepFile::from_toml(source, "sweep").map_err(|e| e.to_string())?,
            dir.into(),
            dir.join("sweep-results"),
        ),
        _ => (
            SweepFile::from_json(source, "sweep").map_err(|e| e.to_string())?,
            dir.into(),
            dir.join("sweep-results"),
        ),
    };
    let mut plan = Plan::new(&file, &dir, &default_out).map_err(|e| e.to_string())?;
    if let Some(out) = out {
        plan.out = out.into();
    }
    Ok(plan)
}

/// The runs of a sweep as JSON: index, point, seed, hash, the equivalent command.
#[pyfunction]
#[pyo3(signature = (source, kind, dir, out=None))]
pub fn plan(source: &str, kind: &str, dir: PathBuf, out: Option<String>) -> PyResult<String> {
    let plan = load_plan(source, kind, &dir, out.as_deref()).map_err(fail)?;
    let runs: Vec<serde_json::Value> = plan
        .runs
        .iter()
        .map(|r| {
            let mut row = serde_json::Map::new();
            row.insert("run".into(), r.index.into());
            for (a, v) in plan.axes.iter().zip(&r.values) {
                row.insert(a.key.clone(), serde_json::to_value(v).unwrap_or_default());
            }
            row.insert("seed".into(), r.seed.into());
            row.insert("point".into(), describe(&plan.axes, &r.values, r.seed).into());
            row.insert("hash".into(), r.hash.clone().into());
            row.insert("command".into(), r.command.clone().into());
            serde_json::Value::Object(row)
        })
        .collect();
    Ok(serde_json::json!({ "out": plan.out, "runs": runs }).to_string())
}

/// The message of a sweep stopped by Ctrl-C.
const INTERRUPTED: &str = "sweep interrupted: the runs that finished are saved, the others run next time";

/// Whether Python has a Ctrl-C pending (checked by a running sweep).
fn ctrl_c() -> bool {
    Python::attach(|py| py.check_signals().is_err())
}

/// `ssdlab.sweep`'s options.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    out: Option<String>,
    workers: Option<usize>,
    backend: String,
    ray_address: Option<String>,
    python: PathBuf,
    table: Option<String>,
    retry_failed: bool,
    time_budget: Option<String>,
    memory_budget: Option<String>,
    progress: bool,
}

/// Runs a sweep; returns its table (`sweep.json`'s JSON) and a summary (JSON).
#[pyfunction]
pub fn sweep(
    py: Python<'_>,
    source: String,
    kind: String,
    dir: PathBuf,
    options: String,
) -> PyResult<(String, String)> {
    py.detach(move || {
        let o: Options = serde_json::from_str(&options).map_err(|e| format!("bad options: {e}"))?;
        let plan = load_plan(&source, &kind, &dir, o.out.as_deref())?;
        let backend = match o.backend.as_str() {
            "local" => BackendChoice::Local {
                workers: o.workers,
                worker: WorkerCommand {
                    program: o.python.clone(),
                    args: vec!["-m".into(), "ssdlab._worker".into()],
                },
            },
            "ray" => BackendChoice::Ray {
                address: o.ray_address.unwrap_or_else(|| "local".into()),
                python: o.python,
            },
            other => return Err(format!("backend must be \"local\" or \"ray\", not {other:?}")),
        };
        let table = match o.table.as_deref() {
            None => None,
            Some("parquet") => Some(TableFormat::Parquet),
            Some("csv") => Some(TableFormat::Csv),
            Some(other) => return Err(format!("table must be \"parquet\" or \"csv\", not {other:?}")),
        };
        let memory = o
            .memory_budget
            .map(|m| m.parse::<sim::ByteSize>().map(|b| b.bytes()))
            .transpose()
            .map_err(|e| format!("memory_budget: {e}"))?;
        let time =
            o.time_budget.as_deref().map(parse_wall).transpose().map_err(|e| format!("time_budget: {e}"))?;
        let opts = SweepOptions {
            backend,
            table,
            retry_failed: o.retry_failed,
            budget: Budget { time, memory },
            progress: o.progress,
            interrupted: Some(ctrl_c),
        };
        let s = match execute(&plan, &opts) {
            Err(SweepError::Interrupted) => return Err(INTERRUPTED.to_string()),
            other => other.map_err(|e| e.to_string())?,
        };
        let summary = serde_json::json!({
            "total": s.status.total, "ran": s.status.ran, "skipped": s.status.skipped,
            "failed": s.status.failed, "table_path": s.table_path, "out": plan.out, "workers": s.workers,
        });
        Ok((serde_json::to_string(&s.table).expect("a table serialises"), summary.to_string()))
    })
    .map_err(
        |e: String| {
            if e == INTERRUPTED { pyo3::exceptions::PyKeyboardInterrupt::new_err(e) } else { fail(e) }
        },
    )
}

/// Runs `spec` (JSON) in a worker process of `python` under a budget, as a local sweep does;
/// returns `(True, report)` or `(False, error)`. What a Ray task of a sweep calls.
#[pyfunction]
#[pyo3(signature = (spec, python, time_s=None, memory=None))]
pub fn run_isolated(
    py: Python<'_>,
    spec: String,
    python: PathBuf,
    time_s: Option<f64>,
    memory: Option<u64>,
) -> (bool, String) {
    py.detach(move || {
        let scratch = std::env::temp_dir().join(format!("ssdlab-run-{}", std::process::id()));
        if let Err(e) = std::fs::create_dir_all(&scratch) {
            return (false, format!("{}: {e}", scratch.display()));
        }
        let tag = format!(
            "{:x}",
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
        );
        let budget = Budget { time: time_s.map(Duration::from_secs_f64), memory };
        let worker = WorkerCommand { program: python, args: vec!["-m".into(), "ssdlab._worker".into()] };
        let outcome = match Running::start(&worker, &spec, &scratch, &tag, budget) {
            Ok(run) => match run.wait() {
                ssdlab::sweep::Outcome::Done(report) => (true, report),
                ssdlab::sweep::Outcome::Failed(e) => (false, e),
            },
            Err(e) => (false, format!("cannot start {}: {e}", worker.program.display())),
        };
        let _ = std::fs::remove_dir(&scratch);
        outcome
    })
}

/// Draws a sweep's chart (PNG or SVG by the extension of `out`, default beside the
/// results); returns the file.
#[pyfunction]
#[pyo3(signature = (results, x, y, hue=None, filter=Vec::new(), out=None))]
pub fn plot(
    results: PathBuf,
    x: String,
    y: String,
    hue: Option<String>,
    filter: Vec<String>,
    out: Option<PathBuf>,
) -> PyResult<PathBuf> {
    let spec = ssdlab::sweep::ChartSpec { x, y, hue, filter };
    ssdlab::sweep::draw_chart(&results, &spec, out.as_deref()).map_err(fail)
}

/// The worker: runs the spec in the file `spec`, writes the report to `report`.
#[pyfunction]
pub fn worker(py: Python<'_>, spec: PathBuf, report: PathBuf) -> PyResult<()> {
    py.detach(move || ssdlab::sweep::run_worker(&spec, &report)).map_err(fail)
}
