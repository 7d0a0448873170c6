//! `ssdlab calibrate`: measure a target with fio, fit the preset's parameters, write the
//! fitted preset and the report.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use firmware::platform::StoreChoice;
use ssdlab::calibrate::{self, CalibrationReport, FitOptions, Measurement, Params, Plan, Target};

use crate::cli::CalibrateArgs;
use crate::{named_device, output_paths};

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
    if !(a.dilation.is_finite() && a.dilation > 0.0) {
        bail!("--dilation {}: expected a positive factor (the served device's --dilation)", a.dilation);
    }
    if a.sim_ios == 0 {
        bail!("--sim-ios must be above zero");
    }
    let mut metrics = [false; 3];
    for m in &a.metrics {
        match calibrate::METRICS.iter().position(|n| n == m) {
            Some(i) => metrics[i] = true,
            None => bail!("--metrics {m}: expected iops, mean or p99"),
        }
    }
    let from = a.from.as_deref().unwrap_or(named_device::DEFAULT_DEVICE);
    let mut cfg = named_device::load(Some(from))?;
    named_device::single_ssd(&cfg, "calibrate")?;
    let blocks = a.blocks.unwrap_or_else(|| named_device::serve_blocks(&cfg));
    named_device::set_blocks(&mut cfg, blocks)?;
    let cfg = super::run::settings(cfg, &a.set)?;
    let params = if a.fit.is_empty() { Params::defaults(&cfg) } else { Params::read(&cfg, &a.fit)? };
    let plan = match (&a.plan, a.quick) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("--plan {}", path.display()))?;
            Plan::from_toml(&text, &path.display().to_string())?
        }
        (None, true) => Plan::quick(),
        (None, false) => Plan::default_plan(),
    };
    // The simulated device must hold the region: build it once to learn its capacity.
    let rig =
        ssdlab::prepare_rig(&cfg, &StoreChoice::Metadata, a.seed, ssdlab::Start::Fresh, &mut |_, _| {})?;
    let capacity = rig.system().front().capacity_lbas() * rig.system().front().lba_bytes() as u64;
    drop(rig);
    let region = match &a.measured {
        Some(_) => None,
        None => Some(plan.region),
    };
    if let Some(region) = region
        && capacity < region.0
    {
        bail!(
            "the plan's region ({region}) is larger than the simulated {} ({capacity} bytes with {blocks} blocks per plane): give --blocks more",
            cfg.name
        );
    }
    let measurement = match &a.measured {
        Some(path) => saved(path)?,
        None => {
            let m = measure(&a, &plan)?;
            // Saved at once, so that a fit cut short can be rerun with --measured.
            super::write_json(&report, &serde_json::json!({ "measurement": &m }))?;
            m
        }
    };
    let threads = a.threads.unwrap_or_else(ssdlab::sweep::cores).max(1);
    eprintln!(
        "fit: {} parameter(s) of {from} ({}) over {} points, on {threads} threads",
        params.list.len(),
        params.list.iter().map(|p| p.path.as_str()).collect::<Vec<_>>().join(", "),
        measurement.points.len()
    );
    let opts =
        FitOptions { bound: a.bound, max_iters: a.max_iters, ios: a.sim_ios, seed: a.seed, threads, metrics };
    let started = Instant::now();
    let fit = calibrate::fit(&cfg, &params, &measurement, &opts)?;
    let r = CalibrationReport::new(from, &params, &measurement, &fit, started.elapsed().as_secs_f64());
    std::fs::write(&a.out, calibrate::fitted_toml(&fit.config, &r))
        .with_context(|| format!("writing {}", a.out.display()))?;
    super::write_json(&report, &r)?;
    print!("{}", r.table());
    eprintln!("wrote {} (the fitted device) and {} (the report)", a.out.display(), report.display());
    Ok(())
}

/// The measurement of an earlier report.
fn saved(path: &Path) -> Result<Measurement> {
    let text = std::fs::read_to_string(path).with_context(|| format!("--measured {}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("--measured {}: not JSON", path.display()))?;
    let m = v.get("measurement").with_context(|| {
        format!("--measured {}: no \"measurement\" (not a calibration report)", path.display())
    })?;
    let m: Measurement =
        serde_json::from_value(m.clone()).with_context(|| format!("--measured {}", path.display()))?;
    m.plan.check()?;
    if m.points.len() != m.plan.point.len() {
        bail!(
            "--measured {}: {} points measured for a plan of {}",
            path.display(),
            m.points.len(),
            m.plan.point.len()
        );
    }
    Ok(m)
}

/// Checks the target and the budget, then runs the plan with fio.
fn measure(a: &CalibrateArgs, plan: &Plan) -> Result<Measurement> {
    plan.check_budget(a.budget)?;
    let target = Target::parse(&a.target);
    let capacity = calibrate::check_target(&target, plan.region.0, a.force_overwrite)?;
    let version = std::process::Command::new(&a.fio).arg("--version").output();
    match version {
        Ok(o) if o.status.success() => {}
        Ok(_) => bail!("{} --version failed: is it fio?", a.fio.display()),
        Err(e) => bail!(
            "running {}: {e} (calibrate measures with fio: install it, or give --fio PATH)",
            a.fio.display()
        ),
    }
    let scratch = tempfile::tempdir().context("a scratch directory for fio's output")?;
    eprintln!(
        "measure: {} points on {} ({} bytes), at least {:.0} s of a {:.0} s budget",
        plan.point.len(),
        target.show(),
        capacity,
        plan.estimate().as_secs_f64(),
        a.budget.as_secs_f64()
    );
    let m = calibrate::measure(
        &a.fio,
        &target,
        capacity,
        plan,
        a.dilation,
        a.budget,
        scratch.path(),
        &mut |line| eprintln!("{line}"),
    )?;
    eprintln!("measure: done in {:.1} s", m.seconds);
    Ok(m)
}
