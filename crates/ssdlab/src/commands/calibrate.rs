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
    let charts = charts(&c.report, &report)?;
    eprintln!(
        "wrote {} (the fitted device), {} (the report) and {}",
        a.out.display(),
        report.display(),
        charts.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    );
    Ok(())
}

/// The measured curves beside the starting and the fitted model's, one chart per metric (IOPS,
/// mean latency), a group of bars per plan point, written beside the report as
/// `STEM.iops.png` and `STEM.mean.png`.
fn charts(r: &calibrate::CalibrationReport, report: &Path) -> Result<Vec<PathBuf>> {
    let stem = report.file_name().map_or_else(|| "calibration".into(), |s| s.to_string_lossy().into_owned());
    let stem =
        stem.strip_suffix(".report.json").or_else(|| stem.strip_suffix(".json")).unwrap_or(&stem).to_string();
    let labels: Vec<String> = r.points.iter().map(|p| p.point.clone()).collect();
    let mut out = Vec::new();
    for (key, what, unit) in [("iops", "IOPS", "IOPS"), ("mean", "mean latency", "us")] {
        let predicted = |p: &calibrate::Predicted| if key == "iops" { p.iops } else { p.mean_us };
        let series = |name: &str, pick: &dyn Fn(&calibrate::PointRow) -> f64| plot::Series {
            name: name.into(),
            points: r
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let y = pick(p);
                    plot::Point { x: i as f64, mean: y, lo: y, hi: y }
                })
                .collect(),
        };
        let measured =
            |p: &calibrate::PointRow| if key == "iops" { p.measured.iops } else { p.measured.mean_us };
        let chart = plot::Chart {
            title: format!("Calibration of {} against {}: {what}", r.from, r.target),
            subtitle: format!(
                "measured, the starting model and the fitted one per plan point; RMS relative error {:.1}% before, {:.1}% after",
                r.rms_error_before * 100.0,
                r.rms_error_after * 100.0
            ),
            x_desc: "plan point".into(),
            y_desc: format!("{what}, {unit}"),
            categories: Some(labels.clone()),
            series: vec![
                series("measured", &measured),
                series(&format!("{} (start)", r.from), &|p| predicted(&p.before)),
                series("fitted", &|p| predicted(&p.after)),
            ],
            log_y: true,
        };
        let path = report.with_file_name(format!("{stem}.{key}.png"));
        out.push(plot::write_chart(&chart, &path).with_context(|| format!("drawing {}", path.display()))?);
    }
    Ok(out)
}
