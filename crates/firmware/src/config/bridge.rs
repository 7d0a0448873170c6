//! The bridge's configuration (`[system] kind = "bridge"`).

use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};
use sim::{ByteSize, SimDuration};

use crate::config::HostStackConfig;
use crate::hil::{HostInterfaceConfig, LinkConfig};

/// A PCIe-to-SAS/SATA bridge striping over several SSDs. The rest of the device configuration
/// describes one of those SSDs (its `[host]` section is its SAS/SATA side).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeConfig {
    /// SSDs behind the bridge. Default: 4.
    #[serde(default = "four")]
    pub drives: u32,
    /// Stripe unit: consecutive host data of this size goes to one SSD, the next to the next.
    /// Default: 64KiB.
    #[serde(default = "stripe")]
    pub stripe: ByteSize,
    /// Protocol conversion time per command in each direction (request and completion).
    /// Default: 5us.
    #[serde(default = "conversion")]
    pub conversion: SimDuration,
    /// Commands the bridge converts at once. Default: 1.
    #[serde(default = "one")]
    pub engines: u32,
    /// Host commands the bridge holds at once (its own queue); more wait in the host.
    /// Default: 32.
    #[serde(default = "depth")]
    pub queue_depth: u32,
    /// Host queues the bridge's driver exposes. Default: 8.
    #[serde(default = "queues")]
    pub queues: u32,
    /// The bridge's PCIe link to the host. Default: Gen2 x8.
    #[serde(default = "link")]
    pub link: LinkConfig,
    /// The bridge chip's own power, watts. Default: 2.5.
    #[serde(default = "power")]
    pub power_w: f64,
    /// The host's thin driver. Default: see `HostStackConfig`.
    #[serde(default)]
    pub host: HostStackConfig,
}

fn four() -> u32 {
    4
}
fn stripe() -> ByteSize {
    ByteSize::kib(64)
}
fn conversion() -> SimDuration {
    SimDuration::from_micros(5)
}
fn one() -> u32 {
    1
}
fn depth() -> u32 {
    32
}
fn queues() -> u32 {
    8
}
fn link() -> LinkConfig {
    LinkConfig { generation: 2, lanes: 8, ..LinkConfig::default() }
}
fn power() -> f64 {
    2.5
}

impl Default for BridgeConfig {
    fn default() -> Self {
        BridgeConfig {
            drives: four(),
            stripe: stripe(),
            conversion: conversion(),
            engines: one(),
            queue_depth: depth(),
            queues: queues(),
            link: link(),
            power_w: power(),
            host: HostStackConfig::default(),
        }
    }
}

impl BridgeConfig {
    /// Checks every field against the SSDs' mapping unit; the error names the first bad one.
    pub fn validate(&self, unit_bytes: u64) -> Result<(), ConfigError> {
        ensure((1..=64).contains(&self.drives), "drives", || {
            format!("must be 1 to 64 (got {})", self.drives)
        })?;
        ensure(
            self.stripe.bytes() >= unit_bytes && self.stripe.bytes().is_multiple_of(unit_bytes),
            "stripe",
            || format!("must be a multiple of the mapping unit ({unit_bytes}B), got {}", self.stripe),
        )?;
        ensure(self.engines >= 1, "engines", || "must be at least 1".into())?;
        ensure(self.queue_depth >= 1, "queue_depth", || "must be at least 1".into())?;
        ensure((1..=1024).contains(&self.queues), "queues", || {
            format!("must be 1 to 1024 (got {})", self.queues)
        })?;
        ensure(self.power_w.is_finite() && self.power_w >= 0.0, "power_w", || {
            format!("must be a number of at least 0 (got {})", self.power_w)
        })?;
        let host = HostInterfaceConfig { link: self.link.clone(), ..HostInterfaceConfig::default() };
        host.validate(unit_bytes)?;
        self.host.validate().map_err(|e| e.within("host"))
    }
}
