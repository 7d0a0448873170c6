//! A whole calibration as one call: what `ssdlab calibrate` and `ssdlab.calibrate` (Python)
//! both run. Checks everything that can be checked before fio runs, measures the target (or
//! reads a saved measurement), fits, and returns the report and the fitted configuration.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use firmware::config::DeviceConfig;
use firmware::platform::StoreChoice;
use serde::Deserialize;

use crate::setup::{Setting, apply_settings};

use super::{
    CalibrateError, CalibrationReport, FitOptions, METRICS, Measurement, Params, Plan, Target, check_target,
    fit, fitted_toml, measure,
};

/// A calibration's inputs (the options of `ssdlab calibrate`, which documents each).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Request {
    /// A block device, a file or an NBD URI (only a label with `measured`).
    pub target: String,
    /// The preset or TOML file whose parameters are fitted (`None`: softssd).
    pub from: Option<String>,
    /// Configuration paths to fit (empty: the defaults).
    pub fit: Vec<String>,
    /// A plan file (`None`: the default plan, or the quick one with `quick`).
    pub plan: Option<PathBuf>,
    /// The six-point quick plan.
    pub quick: bool,
    /// The measurement's wall-clock budget, seconds.
    pub budget_s: f64,
    /// The target's time dilation.
    pub dilation: f64,
    /// A report whose measurement is refitted instead of running fio.
    pub measured: Option<PathBuf>,
    /// Metrics the fit compares (empty: all of iops, mean, p99).
    pub metrics: Vec<String>,
    /// Bound factor on each parameter.
    pub bound: f64,
    /// Most Nelder-Mead iterations.
    pub max_iters: u64,
    /// Commands per simulated point.
    pub sim_ios: u64,
    /// Blocks per plane of the simulated device (`None`: `serve`'s default).
    pub blocks: Option<u32>,
    /// `KEY=VALUE` settings applied to the starting configuration.
    pub set: Vec<String>,
    /// Simulations at once (`None`: the machine's cores).
    pub threads: Option<usize>,
    /// Seed of the simulations.
    pub seed: u64,
    /// The fio program.
    pub fio: PathBuf,
    /// Write over a target holding a file system or partition table.
    pub force_overwrite: bool,
}

impl Default for Request {
    fn default() -> Self {
        Request {
            target: String::new(),
            from: None,
            fit: Vec::new(),
            plan: None,
            quick: false,
            budget_s: 600.0,
            dilation: 1.0,
            measured: None,
            metrics: Vec::new(),
            bound: 10.0,
            max_iters: 150,
            sim_ios: 1000,
            blocks: None,
            set: Vec::new(),
            threads: None,
            seed: 1,
            fio: PathBuf::from("fio"),
            force_overwrite: false,
        }
    }
}

/// A calibration's result.
pub struct Calibrated {
    /// Every point measured and predicted, the parameters before and after.
    pub report: CalibrationReport,
    /// The fitted configuration as TOML, with a header saying where it came from.
    pub fitted_toml: String,
}

fn err(e: impl std::fmt::Display) -> CalibrateError {
    CalibrateError::new(e.to_string().replace('\n', " "))
}

/// Runs `req`: checks, measurement (`on_measured` gets it as soon as it is taken, so that a fit
/// cut short can be rerun from it), fit. `progress` gets one line at a time.
pub fn calibrate(
    req: &Request,
    progress: &mut dyn FnMut(&str),
    on_measured: &mut dyn FnMut(&Measurement) -> Result<(), CalibrateError>,
) -> Result<Calibrated, CalibrateError> {
    if !(req.dilation.is_finite() && req.dilation > 0.0) {
        return Err(err(format!(
            "--dilation {}: expected a positive factor (the served device's --dilation)",
            req.dilation
        )));
    }
    if req.sim_ios == 0 {
        return Err(err("--sim-ios must be above zero"));
    }
    if !(req.budget_s.is_finite() && req.budget_s > 0.0) {
        return Err(err(format!("--budget {} s: expected a positive time", req.budget_s)));
    }
    let mut metrics = [req.metrics.is_empty(); 3];
    for m in &req.metrics {
        match METRICS.iter().position(|n| n == m) {
            Some(i) => metrics[i] = true,
            None => return Err(err(format!("--metrics {m}: expected iops, mean or p99"))),
        }
    }
    let from = req.from.as_deref().unwrap_or(crate::setup::DEFAULT_DEVICE);
    let mut cfg = crate::setup::load_device(Some(from)).map_err(err)?;
    if !cfg.system.is_ssd() {
        return Err(err(format!(
            "{} is a {} system: calibrate drives a single SSD",
            cfg.name,
            cfg.system.kind()
        )));
    }
    let blocks = req.blocks.unwrap_or_else(|| crate::setup::serve_blocks(&cfg));
    crate::setup::set_blocks(&mut cfg, blocks).map_err(err)?;
    let cfg = settings(cfg, &req.set)?;
    let params = if req.fit.is_empty() { Params::defaults(&cfg) } else { Params::read(&cfg, &req.fit)? };
    let plan = match (&req.plan, req.quick) {
        (Some(path), _) => {
            let text =
                std::fs::read_to_string(path).map_err(|e| err(format!("--plan {}: {e}", path.display())))?;
            Plan::from_toml(&text, &path.display().to_string())?
        }
        (None, true) => Plan::quick(),
        (None, false) => Plan::default_plan(),
    };
    // The simulated device must hold the region: build it once to learn its capacity.
    let rig = crate::prepare_rig(&cfg, &StoreChoice::Metadata, req.seed, crate::Start::Fresh, &mut |_, _| {})
        .map_err(err)?;
    let capacity = rig.system().front().capacity_lbas() * rig.system().front().lba_bytes() as u64;
    drop(rig);
    if req.measured.is_none() && capacity < plan.region.0 {
        return Err(err(format!(
            "the plan's region ({}) is larger than the simulated {} ({capacity} bytes with {blocks} blocks per plane): give --blocks more",
            plan.region, cfg.name
        )));
    }
    let measurement = match &req.measured {
        Some(path) => saved(path)?,
        None => {
            let m = run_fio(req, &plan, progress)?;
            on_measured(&m)?;
            m
        }
    };
    let threads = req.threads.unwrap_or_else(crate::sweep::cores).max(1);
    progress(&format!(
        "fit: {} parameter(s) of {from} ({}) over {} points, on {threads} threads",
        params.list.len(),
        params.list.iter().map(|p| p.path.as_str()).collect::<Vec<_>>().join(", "),
        measurement.points.len()
    ));
    let opts = FitOptions {
        bound: req.bound,
        max_iters: req.max_iters,
        ios: req.sim_ios,
        seed: req.seed,
        threads,
        metrics,
    };
    let started = Instant::now();
    let outcome = fit(&cfg, &params, &measurement, &opts)?;
    let report =
        CalibrationReport::new(from, &params, &measurement, &outcome, started.elapsed().as_secs_f64());
    let fitted_toml = fitted_toml(&outcome.config, &report);
    Ok(Calibrated { report, fitted_toml })
}

/// `cfg` with `KEY=VALUE` settings applied.
fn settings(cfg: DeviceConfig, set: &[String]) -> Result<DeviceConfig, CalibrateError> {
    let settings = set
        .iter()
        .map(|s| s.parse::<Setting>().map_err(|e| err(format!("--set {s}: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    apply_settings(&cfg, &settings).map_err(|e| err(format!("--set: {e}")))
}

/// The measurement of an earlier report.
fn saved(path: &Path) -> Result<Measurement, CalibrateError> {
    let at = |e: &dyn std::fmt::Display| err(format!("--measured {}: {e}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| at(&e))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|_| at(&"not JSON"))?;
    let m = v.get("measurement").ok_or_else(|| at(&"no \"measurement\" (not a calibration report)"))?;
    let m: Measurement = serde_json::from_value(m.clone()).map_err(|e| at(&e))?;
    m.plan.check()?;
    if m.points.len() != m.plan.point.len() {
        return Err(at(&format!("{} points measured for a plan of {}", m.points.len(), m.plan.point.len())));
    }
    Ok(m)
}

/// Checks the target and the budget, then runs the plan with fio.
fn run_fio(
    req: &Request,
    plan: &Plan,
    progress: &mut dyn FnMut(&str),
) -> Result<Measurement, CalibrateError> {
    let budget = Duration::from_secs_f64(req.budget_s);
    plan.check_budget(budget)?;
    let target = Target::parse(&req.target);
    let capacity = check_target(&target, plan.region.0, req.force_overwrite)?;
    match std::process::Command::new(&req.fio).arg("--version").output() {
        Ok(o) if o.status.success() => {}
        Ok(_) => return Err(err(format!("{} --version failed: is it fio?", req.fio.display()))),
        Err(e) => {
            return Err(err(format!(
                "running {}: {e} (calibrate measures with fio: install it, or give --fio PATH)",
                req.fio.display()
            )));
        }
    }
    let scratch =
        tempfile::tempdir().map_err(|e| err(format!("a scratch directory for fio's output: {e}")))?;
    progress(&format!(
        "measure: {} points on {} ({} bytes), at least {:.0} s of a {:.0} s budget",
        plan.point.len(),
        target.show(),
        capacity,
        plan.estimate().as_secs_f64(),
        budget.as_secs_f64()
    ));
    let m = measure(&req.fio, &target, capacity, plan, req.dilation, budget, scratch.path(), progress)?;
    progress(&format!("measure: done in {:.1} s", m.seconds));
    Ok(m)
}
