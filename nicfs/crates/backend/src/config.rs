//! Back-end configuration: the SmartNIC model and the pipeline knobs.

use serde::{Deserialize, Serialize};

/// The DMA channel between the NIC and host PM.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DmaModel {
    /// Fixed cost of each transfer (doorbell, descriptor, PCIe round trip), in ns. Default: 1000.
    pub latency_ns: u64,
    /// Transfer bandwidth in MB/s; 0 = unlimited. Default: 8000 (PCIe 3.0 x8, effective).
    pub bandwidth_mbps: u64,
}

impl Default for DmaModel {
    fn default() -> Self {
        DmaModel { latency_ns: 1000, bandwidth_mbps: 8000 }
    }
}

/// Back-end tunables. Every field's doc ends with its default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BackendConfig {
    /// Number of weak NIC cores shared by all pipelines. Default: 8.
    pub workers: usize,
    /// How much slower a NIC core is than a host core (1.0 = as fast). Default: 2.0.
    pub slowdown: f64,
    /// The DMA channel model.
    pub dma: DmaModel,
    /// Index-block cache size in 64-byte lines; 0 disables the cache. Default: 65536 (4 MiB).
    pub index_cache_lines: usize,
    /// Run the four stages as a pipeline of threads (true) or one after another on one
    /// thread (false, the "without pipeline" ablation). Default: true.
    pub pipeline: bool,
    /// Most log records fetched per batch. Default: 256.
    pub batch_max: usize,
    /// Lease duration in ms. Default: 2000.
    pub lease_ms: u64,
    /// Sleep between polls of an idle log, in µs. Default: 200.
    pub poll_idle_us: u64,
}

impl Default for BackendConfig {
    fn default() -> Self {
        BackendConfig {
            workers: 8,
            slowdown: 2.0,
            dma: DmaModel::default(),
            index_cache_lines: 65536,
            pipeline: true,
            batch_max: 256,
            lease_ms: 2000,
            poll_idle_us: 200,
        }
    }
}

/// A configuration field that fails validation.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid back-end config: `{field}` {reason}")]
pub struct BackendConfigError {
    /// The field.
    pub field: &'static str,
    /// Why.
    pub reason: &'static str,
}

impl BackendConfig {
    /// A configuration with no modelled costs (functional tests).
    pub fn free() -> BackendConfig {
        BackendConfig {
            slowdown: 1.0,
            dma: DmaModel { latency_ns: 0, bandwidth_mbps: 0 },
            ..BackendConfig::default()
        }
    }

    /// Checks the fields.
    pub fn validate(&self) -> Result<(), BackendConfigError> {
        let bad = |field, reason| Err(BackendConfigError { field, reason });
        if self.workers == 0 || self.workers > 256 {
            return bad("workers", "must be in 1..=256");
        }
        if !(self.slowdown >= 1.0 && self.slowdown <= 1000.0) {
            return bad("slowdown", "must be in 1.0..=1000.0");
        }
        if self.batch_max == 0 || self.batch_max > 65536 {
            return bad("batch_max", "must be in 1..=65536");
        }
        if self.lease_ms < 10 {
            return bad("lease_ms", "must be at least 10");
        }
        if self.dma.latency_ns > 1_000_000_000 {
            return bad("dma.latency_ns", "exceeds 1 s");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_validate_and_name_fields() {
        let c: BackendConfig = toml::from_str("workers = 4\n[dma]\nlatency_ns = 500").unwrap();
        assert_eq!(c.workers, 4);
        assert_eq!(c.dma.latency_ns, 500);
        assert_eq!(c.dma.bandwidth_mbps, 8000);
        c.validate().unwrap();
        let bad = BackendConfig { slowdown: 0.5, ..BackendConfig::default() };
        assert_eq!(bad.validate().unwrap_err().field, "slowdown");
        assert!(toml::from_str::<BackendConfig>("nope = 1").is_err());
    }
}
