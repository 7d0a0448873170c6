//! The timed back end: a PM cost model on top of another back end.

use serde::{Deserialize, Serialize};

use crate::{CACHE_LINE, Pm, PmAddr, spin_for_ns};

/// PM access costs. Defaults follow published first-generation Optane DC measurements
/// (about 170 ns read and 90 ns write-to-ADR latency, ~6.6 GB/s read and ~2.3 GB/s write
/// bandwidth per DIMM), rounded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CostModel {
    /// Latency charged to every read call, in ns. Default: 170.
    pub read_latency_ns: u64,
    /// Latency charged to every fence that follows at least one flush, in ns. Default: 90.
    pub write_latency_ns: u64,
    /// Read bandwidth in MB/s (10^6 bytes). Default: 6600.
    pub read_bandwidth_mbps: u64,
    /// Write bandwidth (flushed / non-temporal bytes) in MB/s. Default: 2300.
    pub write_bandwidth_mbps: u64,
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel {
            read_latency_ns: 170,
            write_latency_ns: 90,
            read_bandwidth_mbps: 6600,
            write_bandwidth_mbps: 2300,
        }
    }
}

/// A cost-model field that fails validation.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid PM cost model: `{field}` {reason}")]
pub struct CostModelError {
    /// The offending field.
    pub field: &'static str,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl CostModel {
    /// A model that charges nothing (useful for functional tests).
    pub fn free() -> CostModel {
        CostModel { read_latency_ns: 0, write_latency_ns: 0, read_bandwidth_mbps: 0, write_bandwidth_mbps: 0 }
    }

    /// Checks the fields; a bandwidth of 0 means "unlimited".
    pub fn validate(&self) -> Result<(), CostModelError> {
        let max_latency = 1_000_000_000;
        if self.read_latency_ns > max_latency {
            return Err(CostModelError { field: "read_latency_ns", reason: "exceeds 1 s" });
        }
        if self.write_latency_ns > max_latency {
            return Err(CostModelError { field: "write_latency_ns", reason: "exceeds 1 s" });
        }
        Ok(())
    }

    /// Nanoseconds to move `bytes` at `mbps` MB/s (0 = unlimited).
    pub fn transfer_ns(bytes: u64, mbps: u64) -> u64 {
        (bytes * 1000).checked_div(mbps).unwrap_or(0)
    }

    /// Cost of one read of `bytes`, in ns.
    pub fn read_ns(&self, bytes: u64) -> u64 {
        self.read_latency_ns + Self::transfer_ns(bytes, self.read_bandwidth_mbps)
    }

    /// Cost of writing back `bytes`, in ns (latency is charged at the fence).
    pub fn write_ns(&self, bytes: u64) -> u64 {
        Self::transfer_ns(bytes, self.write_bandwidth_mbps)
    }
}

/// Wraps a PM back end and charges the cost model by busy-waiting.
pub struct TimedPm<P> {
    inner: P,
    model: CostModel,
}

impl<P: Pm> TimedPm<P> {
    /// Wraps `inner` with `model` (validate the model first).
    pub fn new(inner: P, model: CostModel) -> TimedPm<P> {
        TimedPm { inner, model }
    }

    /// The cost model in force.
    pub fn model(&self) -> &CostModel {
        &self.model
    }
}

impl<P: Pm> Pm for TimedPm<P> {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read(&self, addr: PmAddr, buf: &mut [u8]) {
        self.inner.read(addr, buf);
        spin_for_ns(self.model.read_ns(buf.len() as u64));
    }

    fn store(&self, addr: PmAddr, data: &[u8]) {
        self.inner.store(addr, data);
    }

    fn store_nt(&self, addr: PmAddr, data: &[u8]) {
        self.inner.store_nt(addr, data);
        spin_for_ns(self.model.write_ns(data.len() as u64));
    }

    fn flush(&self, addr: PmAddr, len: u64) {
        self.inner.flush(addr, len);
        let lines = if len == 0 { 0 } else { (addr.get() + len - 1) / CACHE_LINE - addr.line() + 1 };
        spin_for_ns(self.model.write_ns(lines * CACHE_LINE));
    }

    fn fence(&self) {
        self.inner.fence();
        spin_for_ns(self.model.write_latency_ns);
    }

    fn store_u64_atomic(&self, addr: PmAddr, value: u64) {
        self.inner.store_u64_atomic(addr, value);
    }

    fn load_u64_atomic(&self, addr: PmAddr) -> u64 {
        let v = self.inner.load_u64_atomic(addr);
        spin_for_ns(self.model.read_latency_ns);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_costs_scale_with_size() {
        let m = CostModel::default();
        m.validate().unwrap();
        assert!(m.read_ns(4096) > m.read_ns(64));
        assert_eq!(CostModel::transfer_ns(1000, 1000), 1000);
        assert_eq!(CostModel::transfer_ns(1000, 0), 0);
    }

    #[test]
    fn validation_names_the_field() {
        let m = CostModel { write_latency_ns: u64::MAX, ..CostModel::default() };
        assert_eq!(m.validate().unwrap_err().field, "write_latency_ns");
    }

    #[test]
    fn config_parses_with_defaults() {
        let m: CostModel = toml::from_str("read_latency_ns = 300").unwrap();
        assert_eq!(m.read_latency_ns, 300);
        assert_eq!(m.write_bandwidth_mbps, 2300);
        assert!(toml::from_str::<CostModel>("bogus = 1").is_err());
    }
}
