//! FIL configuration.

use serde::{Deserialize, Serialize};
use sim::SimDuration;
use sim::config::{ConfigError, ensure};
use sim::sync::RingSpec;

use crate::fil::policy::{FifoPolicy, PriorityPolicy, SchedPolicy};
use crate::fil::txn::QueueKind;

/// Which transaction-scheduling policy the FIL runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum PolicyConfig {
    /// A fixed queue order (see [`PriorityPolicy`]).
    Priority {
        /// Every queue kind once, highest priority first. Default: mapping-read, user-read,
        /// gc-read, mapping-write, user-write, gc-write, erase.
        #[serde(default = "default_order")]
        order: Vec<QueueKind>,
    },
    /// Oldest head first, no priorities.
    Fifo,
}

fn default_order() -> Vec<QueueKind> {
    QueueKind::ALL.to_vec()
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig::Priority { order: default_order() }
    }
}

impl PolicyConfig {
    /// The policy object.
    pub fn build(&self) -> Box<dyn SchedPolicy> {
        match self {
            PolicyConfig::Priority { order } => Box::new(PriorityPolicy::new(order.clone())),
            PolicyConfig::Fifo => Box::new(FifoPolicy),
        }
    }
}

/// Flash interface layer configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilConfig {
    /// Transaction scheduling. Default: priority, in the default order.
    #[serde(default)]
    pub policy: PolicyConfig,
    /// Batch same-die, same-page-offset transactions on different planes. Default: true.
    #[serde(default = "yes")]
    pub multi_plane: bool,
    /// How deep in a queue to look for multi-plane partners. Default: 8.
    #[serde(default = "default_scan")]
    pub multi_plane_scan: usize,
    /// FIL-core cycles to take one transaction off the available ring. Default: 0.
    #[serde(default)]
    pub intake_cycles: u64,
    /// FIL-core cycles to issue one command to a die. Default: 0.
    #[serde(default)]
    pub dispatch_cycles: u64,
    /// FIL-core cycles to post one completion. Default: 0.
    #[serde(default)]
    pub complete_cycles: u64,
    /// The available ring (FTL to FIL). Default: 1024 slots, no cost, no latency.
    #[serde(default)]
    pub avail_ring: RingSpec,
    /// Delay before the FTL core sees a completion on the used ring (IPI). Default: 0.
    #[serde(default)]
    pub used_ring_latency: SimDuration,
}

fn yes() -> bool {
    true
}

fn default_scan() -> usize {
    8
}

impl Default for FilConfig {
    fn default() -> Self {
        FilConfig {
            policy: PolicyConfig::default(),
            multi_plane: true,
            multi_plane_scan: default_scan(),
            intake_cycles: 0,
            dispatch_cycles: 0,
            complete_cycles: 0,
            avail_ring: RingSpec::default(),
            used_ring_latency: SimDuration::ZERO,
        }
    }
}

impl FilConfig {
    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let PolicyConfig::Priority { order } = &self.policy {
            for k in QueueKind::ALL {
                let n = order.iter().filter(|&&o| o == k).count();
                ensure(n == 1, "policy.order", || {
                    let kind = serde_json::to_string(&k).unwrap_or_default();
                    format!("must list every queue exactly once; {kind} appears {n} times")
                })?;
            }
        }
        ensure(self.multi_plane_scan >= 1, "multi_plane_scan", || "must be at least 1".into())?;
        ensure(self.avail_ring.capacity >= 1, "avail_ring.capacity", || "must be at least 1".into())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_validates_policies() {
        let c: FilConfig = toml::from_str("policy = { kind = 'fifo' }\nmulti_plane = false").unwrap();
        c.validate().unwrap();
        assert_eq!(c.policy, PolicyConfig::Fifo);
        let c: FilConfig = toml::from_str("policy = { kind = 'priority', order = ['user-read'] }").unwrap();
        assert_eq!(
            c.validate().unwrap_err().to_string(),
            "policy.order: must list every queue exactly once; \"mapping-read\" appears 0 times"
        );
        let err = toml::from_str::<FilConfig>("policy = { kind = 'lottery' }").unwrap_err().to_string();
        assert!(err.contains("unknown variant `lottery`"), "{err}");
    }
}
