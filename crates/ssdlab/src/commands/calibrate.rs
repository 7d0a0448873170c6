//! `ssdlab calibrate`: measure a target with fio, fit the preset's parameters, write the
//! fitted preset and the report (the work is `ssdlab::calibrate::calibrate`, which Python's
//! `ssdlab.calibrate` runs too).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use ssdlab::calibrate::{self, Request};

use crate::cli::CalibrateArgs;
use crate::output_paths;

/// Where the JSON report goes when --report does not say: `x.toml` gives `x.report.json`.
fn report_path(out: &Path) -> PathBuf {
    let stem = out.file_stem().map_or_else(|| "calibration".into(), |s| s.to_string_lossy().into_owned());
    out.with_file_name(format!("{stem}.report.json"))
}

pub fn run(a: CalibrateArgs) -> Result<()> {
    // Everything that can be checked is, before fio runs.
    let report = a.report.clone().unwrap_or_else(|| report_path(&a.out));
    output_paths::file("--out", &a.out)?;
    output_paths::file("--report", &report)?;
    let req = Request {
        target: a.target,
        from: a.from,
        fit: a.fit,
        plan: a.plan,
        quick: a.quick,
        budget_s: a.budget.as_secs_f64(),
        dilation: a.dilation,
        measured: a.measured,
        metrics: a.metrics,
        bound: a.bound,
        max_iters: a.max_iters,
        sim_ios: a.sim_ios,
        blocks: a.blocks,
        set: a.set,
        threads: a.threads,
        seed: a.seed,
        fio: a.fio,
        force_overwrite: a.force_overwrite,
    };
    // The measurement is saved at once, so that a fit cut short can be rerun with --measured.
    let mut save = |m: &calibrate::Measurement| {
        super::write_json(&report, &serde_json::json!({ "measurement": m }))
            .map_err(|e| calibrate::CalibrateError::new(format!("{e:#}")))
    };
    let c = calibrate::calibrate(&req, &mut |line| eprintln!("{line}"), &mut save)?;
    std::fs::write(&a.out, &c.fitted_toml).with_context(|| format!("writing {}", a.out.display()))?;
    super::write_json(&report, &c.report)?;
    print!("{}", c.report.table());
    eprintln!("wrote {} (the fitted device) and {} (the report)", a.out.display(), report.display());
    Ok(())
}
