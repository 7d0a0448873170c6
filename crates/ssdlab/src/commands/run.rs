//! `ssdlab run`: simulate a device under fio-like jobs.

use anyhow::{Context, Result, bail};
use host::workload::{JobSpec, parse_job_file};

use crate::cli::{JobArgs, RunArgs};
use crate::device;
use crate::progress::Progress;

pub fn run(a: RunArgs) -> Result<()> {
    let mut cfg = device::load(a.device.as_deref())?;
    cfg.ftl.bypass |= a.ftl_bypass;
    let jobs = jobs(&a.jobs)?;
    let store = device::store(&a.common)?;
    let mut bar = Progress::new("commands");
    let report = ssdlab::simulate(&cfg, &jobs, a.common.seed, &store, &mut |p| {
        if let Some(total) = p.total {
            bar.update(p.done, total);
        }
    })?;
    bar.finish();
    println!("{}", report::summary(&report));
    if let Some(path) = &a.common.json {
        super::write_json(path, &report)?;
    }
    Ok(())
}

/// The jobs from a job file, or from the flags on top of the defaults.
fn jobs(a: &JobArgs) -> Result<Vec<JobSpec>> {
    if let Some(path) = &a.job_file {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let jobs = parse_job_file(&text, &path.display().to_string())?;
        if jobs.is_empty() {
            bail!("{}: no jobs (a job is a [section] after [global])", path.display());
        }
        return Ok(jobs);
    }
    let mut job = JobSpec::new("default");
    let defaults = [
        ("rw", "randrw"),
        ("rwmixread", "70"),
        ("bs", "4k"),
        ("iodepth", "32"),
        ("numjobs", "4"),
        ("number_ios", "50000"),
        ("size", "8g"),
    ];
    let flags = [
        ("rw", &a.rw),
        ("bs", &a.bs),
        ("bssplit", &a.bssplit),
        ("iodepth", &a.iodepth),
        ("numjobs", &a.numjobs),
        ("rwmixread", &a.rwmixread),
        ("size", &a.size),
        ("offset", &a.offset),
        ("random_distribution", &a.random_distribution),
        ("number_ios", &a.number_ios),
        ("runtime", &a.runtime),
        ("ramp_time", &a.ramp_time),
        ("rate_iops", &a.rate_iops),
        ("rate", &a.rate),
    ];
    let any_flag = flags.iter().any(|(_, v)| v.is_some()) || a.time_based || !a.fio.is_empty();
    if !any_flag {
        for (k, v) in defaults {
            job.set(k, Some(v)).expect("default options are valid");
        }
    } else {
        for (k, v) in
            defaults.iter().filter(|(k, _)| ["rw", "bs", "iodepth", "numjobs", "number_ios"].contains(k))
        {
            job.set(k, Some(v)).expect("default options are valid");
        }
    }
    for (k, v) in flags {
        if let Some(v) = v {
            job.set(k, Some(v)).with_context(|| format!("--{}", k.replace('_', "-")))?;
        }
    }
    if a.time_based {
        job.set("time_based", None).context("--time-based")?;
        if a.number_ios.is_none() {
            job.number_ios = None;
        }
    }
    if a.runtime.is_some() && a.number_ios.is_none() {
        job.number_ios = None;
    }
    for kv in &a.fio {
        let (k, v) = match kv.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (kv.as_str(), None),
        };
        job.set(k, v).with_context(|| format!("--fio {kv}"))?;
    }
    Ok(vec![job])
}
