//! [`RunSpec`]: everything a run's report depends on, resolved, so that it can be sent to a
//! worker process or a Ray task as JSON, hashed, and run.

use firmware::config::DeviceConfig;
use firmware::ftl::Precondition;
use firmware::platform::StoreChoice;
use host::run::RunOptions;
use host::workload::JobSpec;
use report::Report;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{SimulateError, Start};

/// What a run ages the device to when it does not say: a random fill plus twice its capacity
/// of random overwrites, GC running as it would (`ssdlab run`'s default).
pub const DEFAULT_AGEING: Precondition = Precondition::SteadyState { overwrites: 2.0 };

/// One run, fully resolved: the device, the jobs, how the device starts and the seed. A run is
/// a pure function of its spec and the ssdlab version (page data is not stored: the metadata
/// store, as `ssdlab run` uses by default).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// The device, with every setting applied.
    pub device: DeviceConfig,
    /// The fio-like jobs.
    pub jobs: Vec<JobSpec>,
    /// The fast preconditioning before the run (`steady-state:2`, `seq-fill`, ...); `None`
    /// starts from a fresh device.
    pub precondition: Option<String>,
    /// The run's seed.
    pub seed: u64,
}

/// A spec that cannot be run.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The spec is not JSON of a run spec.
    #[error("not a run spec: {0}")]
    Json(#[from] serde_json::Error),
    /// The precondition is not one ssdlab knows.
    #[error("precondition: {0}")]
    Precondition(String),
    /// The device configuration is not valid.
    #[error("device: {0}")]
    Device(#[from] sim::config::ConfigError),
    /// The run failed.
    #[error(transparent)]
    Run(#[from] SimulateError),
}

impl RunSpec {
    /// The spec as JSON (what a worker reads).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a run spec serialises")
    }

    /// Reads a spec written by [`RunSpec::to_json`] and checks it.
    pub fn from_json(text: &str) -> Result<RunSpec, SpecError> {
        let spec: RunSpec = serde_json::from_str(text)?;
        spec.device.validate()?;
        spec.start()?;
        Ok(spec)
    }

    /// The content hash of the inputs: SHA-256 over the spec's JSON and the ssdlab version,
    /// in hex. Two runs with the same hash give the same report (wall-clock fields aside).
    pub fn hash(&self) -> String {
        let mut h = Sha256::new();
        h.update(b"ssdlab ");
        h.update(env!("CARGO_PKG_VERSION").as_bytes());
        h.update(b"\n");
        h.update(self.to_json().as_bytes());
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// How the device starts.
    fn start(&self) -> Result<Start, SpecError> {
        match &self.precondition {
            None => Ok(Start::Fresh),
            Some(p) => p.parse::<Precondition>().map(Start::Precondition).map_err(SpecError::Precondition),
        }
    }

    /// Runs the spec: the same as `ssdlab run` with the same device, jobs, start and seed
    /// (metadata store, default time-series interval, no progress).
    pub fn execute(&self) -> Result<Report, SpecError> {
        let prepared =
            crate::prepare(&self.device, &StoreChoice::Metadata, self.seed, self.start()?, &mut |_, _| {})?;
        Ok(crate::measure(&prepared, &self.jobs, self.seed, &RunOptions::default(), &mut |_| {})?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(seed: u64) -> RunSpec {
        let device = firmware::presets::get("softssd").unwrap().unwrap();
        let mut job = JobSpec::new("j");
        job.set("rw", Some("randwrite")).unwrap();
        RunSpec { device, jobs: vec![job], precondition: Some("steady-state:2".into()), seed }
    }

    #[test]
    fn json_round_trips_and_the_hash_follows_the_inputs() {
        let s = spec(3);
        let back = RunSpec::from_json(&s.to_json()).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.hash(), s.hash());
        assert_eq!(s.hash().len(), 64);
        assert_ne!(spec(4).hash(), s.hash());
        let mut op = s.clone();
        op.device.ftl.op = 0.3;
        assert_ne!(op.hash(), s.hash());
        let mut fresh = s.clone();
        fresh.precondition = None;
        assert_ne!(fresh.hash(), s.hash());
    }

    #[test]
    fn bad_specs_are_refused() {
        let mut s = spec(1);
        s.precondition = Some("aged".into());
        assert!(
            RunSpec::from_json(&s.to_json()).unwrap_err().to_string().starts_with("precondition: unknown")
        );
        assert!(RunSpec::from_json("{}").unwrap_err().to_string().starts_with("not a run spec"));
    }
}
