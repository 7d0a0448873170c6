//! `ssdlab age`: age a device and save it as a snapshot.

use std::time::Instant;

use anyhow::{Result, anyhow};
use firmware::ftl::Precondition;
use firmware::platform::StoreChoice;
use firmware::snapshot::Snapshot;
use ssdlab::Start;

use super::run::{Workload, any_job_flag, jobs, measure, prepare, shaped};
use crate::cli::{AgeArgs, OutputArgs};

pub fn run(a: AgeArgs) -> Result<()> {
    let cfg = shaped(a.device.as_deref(), &a.shape)?;
    if !cfg.system.is_ssd() {
        return Err(anyhow!(
            "{}: ssdlab age saves single SSDs; this device is a {}",
            cfg.name,
            cfg.system.kind()
        ));
    }
    crate::output_paths::file("--out", &a.out)?;
    let simulate = any_job_flag(&a.jobs);
    let kind = match (a.precondition, simulate) {
        (Some(k), _) => Some(k),
        (None, false) => Some(Precondition::SteadyState { overwrites: 2.0 }),
        (None, true) => None,
    };
    let workload =
        Workload::Jobs { jobs: if simulate { jobs(&a.jobs)? } else { Vec::new() }, default: false };
    let started = Instant::now();
    let start = kind.map_or(Start::Fresh, Start::Precondition);
    let rig = prepare(&cfg, &StoreChoice::Metadata, a.seed, start, &mut |sys| {
        workload.check(sys)?;
        if let Some(k) = kind {
            eprintln!("ageing {}: {} (fast path, untimed)", cfg.name, ssdlab::describe(k));
        }
        Ok(())
    })?;
    let ssdlab::Built::Ssd(prepared) = &rig.built else { unreachable!("checked above") };
    let mut aged: Vec<String> =
        kind.map(|k| format!("{} (fast path)", ssdlab::describe(k))).into_iter().collect();
    if let Workload::Jobs { jobs, .. } = &workload
        && simulate
    {
        let report =
            measure(&prepared.device, &prepared.initial_state, &workload, a.seed, &OutputArgs::default())?;
        println!("{}", report::summary(&report));
        aged.push(format!("simulated {} commands ({})", report.total.count, job_summary(jobs)));
    }
    // The fast preconditioner leaves the device at rest, its cache full of dirty lines that
    // hold what flash holds: saved as they are, so that runs from the file start where runs
    // aged inline do. Simulated jobs leave newer data in the cache and work in flight.
    if simulate {
        prepared.device.quiesce().map_err(|e| anyhow!("bringing the device to rest: {e}"))?;
    }
    let i = Snapshot::save(&prepared.device, &a.out, &aged.join(", then "), a.seed)?;
    let size = std::fs::metadata(&a.out).map(|m| m.len()).unwrap_or(0);
    println!(
        "saved {} ({:#}): {} | {:#} of data, {} free blocks, erase counts min/mean/max {:.0}/{:.1}/{:.0} | {:.1}s",
        a.out.display(),
        sim::ByteSize(size),
        i.aged,
        sim::ByteSize(i.mapped_bytes),
        i.free_blocks,
        i.erase_counts[0],
        i.erase_counts[1],
        i.erase_counts[2],
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// A short description of the ageing jobs for the snapshot header.
fn job_summary(jobs: &[host::workload::JobSpec]) -> String {
    jobs.iter().map(|j| format!("{:?} {}", j.rw, j.name)).collect::<Vec<_>>().join("; ")
}
