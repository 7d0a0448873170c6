//! Helpers shared by the experiment tests: small devices described in TOML, multi-phase runs
//! on one device, and (from `firmware::ftl::theory`) the analytic write-amplification model.

use firmware::config::DeviceConfig;
use firmware::device::Device;
use firmware::platform::StoreChoice;
use host::run::{HostResults, run_jobs};
use host::workload::JobSpec;

/// A device from TOML text (panics with the error: tests only).
pub fn device(text: &str) -> DeviceConfig {
    DeviceConfig::from_toml(text, "test device").unwrap_or_else(|e| panic!("{e}"))
}

/// A job from fio options (`"rw=randwrite bs=4k"`).
pub fn job(options: &str) -> JobSpec {
    let mut j = JobSpec::new("test");
    for kv in options.split_whitespace() {
        let (k, v) = match kv.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (kv, None),
        };
        j.set(k, v).unwrap_or_else(|e| panic!("{kv}: {e}"));
    }
    j
}

/// Runs one job to completion on `dev`.
pub fn run(dev: &Device, options: &str, seed: u64) -> HostResults {
    run_jobs(dev, &[job(options)], seed, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"))
}

/// Lets `dev`'s background work finish after a run (a minute of simulated time at most).
pub fn settle(dev: &Device) {
    dev.settle(sim::SimDuration::from_secs(60)).unwrap_or_else(|e| panic!("{e}"));
}

/// Builds `cfg` in metadata-only mode.
pub fn build(cfg: &DeviceConfig, seed: u64) -> Device {
    Device::build(cfg, &StoreChoice::Metadata, seed).unwrap()
}

pub use firmware::ftl::theory::{greedy_waf, lambert_w0};

#[test]
fn the_model_matches_its_published_value() {
    // Xiang and Kurkoski report 2.36 at rho = 0.3.
    assert!((greedy_waf(0.3) - 2.36).abs() < 0.01, "{}", greedy_waf(0.3));
    assert!((lambert_w0(-0.2) - -0.259_171_101_819_073_7).abs() < 1e-12);
}
