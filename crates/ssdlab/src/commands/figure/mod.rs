//! `ssdlab figure NAME`: regenerate a paper's comparison from the model, with the published
//! values beside every cell, and the reports and plots of the runs behind them. One module per
//! paper.

mod fidelity;
mod gc_theory;
mod hostftl_array;
mod lab;
mod mqsim_fast18;
mod pcie_study;
mod pipessd;
mod softssd;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use firmware::config::DeviceConfig;
use firmware::ftl::Precondition;
use firmware::platform::StoreChoice;
use firmware::snapshot::Snapshot;
use ssdlab::{Prepared, Start};

pub(crate) use crate::cli::FigureOpts;
use crate::cli::{FigureArgs, FigureName};

pub fn run(a: FigureArgs) -> Result<()> {
    match a.name {
        FigureName::Softssd(o) => softssd::run(&o),
        FigureName::Pipessd(p) => pipessd::run(&p),
        FigureName::HostftlArray(o) => hostftl_array::run(&o),
        FigureName::PcieStudy(o) => pcie_study::run(&o),
        FigureName::GcTheory(o) => gc_theory::run(&o),
        FigureName::MqsimFast18(o) => mqsim_fast18::run(&o),
        FigureName::Fidelity(o) => fidelity::run(&o),
    }
}

/// Where the shared traces are: `dir` if given, else `../shared/traces` from the current
/// directory (the project's layout).
fn traces_dir(dir: Option<&Path>) -> Result<PathBuf> {
    let d = dir.map_or_else(|| PathBuf::from("../shared/traces"), Path::to_path_buf);
    if !d.is_dir() {
        bail!("no trace directory at {} (give one with --traces DIR)", d.display());
    }
    Ok(d)
}

/// A device aged once and saved, so that every run of a figure starts from the same state.
struct Aged {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Aged {
    /// Ages `cfg` to GC steady state (fast path) and saves it as the ageing left it (at rest,
    /// its cache full of dirty lines holding what flash holds), as `ssdlab age` does.
    fn new(cfg: &DeviceConfig, seed: u64) -> Result<Aged> {
        let kind = Precondition::SteadyState { overwrites: 2.0 };
        let p = ssdlab::prepare(cfg, &StoreChoice::Metadata, seed, Start::Precondition(kind), &mut |_, _| {})
            .with_context(|| format!("ageing {}", cfg.name))?;
        let dir = tempfile::tempdir().context("a temporary directory for the aged device")?;
        let path = dir.path().join("aged.state");
        Snapshot::save(&p.device, &path, &ssdlab::describe(kind), seed)?;
        Ok(Aged { path, _dir: dir })
    }

    /// The aged device under `cfg` (the same device, another architecture or cache policy).
    fn device(&self, cfg: &DeviceConfig, seed: u64) -> Result<Prepared> {
        let snapshot = Box::new(Snapshot::load(&self.path)?);
        let label = "aged".to_string();
        Ok(ssdlab::prepare(
            cfg,
            &StoreChoice::Metadata,
            seed,
            Start::Snapshot { snapshot, label },
            &mut |_, _| {},
        )?)
    }
}
