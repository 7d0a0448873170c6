//! `ssdlab phys`: raw flash workloads straight into the FIL.

use anyhow::{Context, Result};
use host::phys::{self, PhysOp, PhysPattern, PhysReport, PhysWorkload};

use crate::cli::{CommonArgs, OpArg, PatternArg, PhysArgs};
use crate::named_device;
use crate::progress::Progress;

pub fn run(a: PhysArgs) -> Result<()> {
    let w = PhysWorkload {
        op: match a.op {
            OpArg::Read => PhysOp::Read,
            OpArg::Program => PhysOp::Program,
            OpArg::Erase => PhysOp::Erase,
            OpArg::Mixed => PhysOp::Mixed,
        },
        read_pct: a.read_pct,
        pattern: match a.pattern {
            PatternArg::Stripe => PhysPattern::Stripe,
            PatternArg::Random => PhysPattern::Random,
        },
        channels: a.channels,
        ways: a.ways,
        dies: a.dies,
        planes: a.planes,
        qd: a.qd,
        rate: a.rate,
        count: a.count,
        read_bytes: a.read_bytes.as_deref().map(str::parse).transpose().context("--read-bytes")?,
    };
    let report = execute(a.device.as_deref(), &w, &a.common)?;
    println!("{report}");
    Ok(())
}

/// Loads the device, runs `w` on it and writes the JSON report if asked.
pub fn execute(device_name: Option<&str>, w: &PhysWorkload, common: &CommonArgs) -> Result<PhysReport> {
    if let Some(path) = &common.json {
        crate::output_paths::file("--json", path)?;
    }
    let cfg = named_device::load(device_name)?;
    if cfg.system.kind() == "bridge" {
        anyhow::bail!("{} is a bridge over several SSDs: `ssdlab phys` drives one flash array", cfg.name);
    }
    w.validate(&cfg.geometry).map_err(|e| anyhow::anyhow!("workload: {e}"))?;
    let platform = named_device::build(&cfg, common)?;
    let mut progress = Progress::new("transactions");
    let report = phys::run(&platform, w, &mut |done, total| progress.update(done, total))?;
    progress.finish();
    if let Some(path) = &common.json {
        super::write_json(path, &report)?;
    }
    Ok(report)
}
