//! Which firmware architecture runs, and on which cores: the `[architecture]` section.

use serde::{Deserialize, Serialize};
use sim::SimDuration;
use sim::config::{ConfigError, ensure};
use sim::sync::{LockCosts, LockKind, StageQueueSpec};

use crate::arch::{Architecture, Deepflash, Pipessd, Softssd, Tradition};

/// Which architecture, on which cores: the `[architecture]` table, `kind` naming the variant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ArchitectureConfig {
    /// SoftSSD: HIL and FTL coroutines (k workers per queue) on one core, the FIL on a second,
    /// the ECC on a third, joined by available / used rings.
    Softssd(Softssd),
    /// Tradition-N (one-to-many thread-request mapping): N cores each fetch and run whole
    /// requests; the data cache, mapping table and queues are shared behind locks.
    Tradition(Tradition),
    /// PipeSSD (many-to-one): four stages pinned to four cores, joined by SPSC stage queues,
    /// no locks on the request path; cache management in the last stage, a pilot table in the
    /// FTL stage, a per-line wait list in the FIL stage.
    Pipessd(Pipessd),
    /// A DeepFlash-style many-to-many firmware (FAST'20): firmware functions as threads spread
    /// over the cores — queue gather and completion, address translation partitioned by LPN
    /// range, flash scheduling — with the data cache bypassed when a request's line is
    /// occupied.
    Deepflash(Deepflash),
}

/// Locks of a lock-based firmware.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockConfig {
    /// How a request waits for the cache index and the mapping table (held for a lookup or an
    /// update). Default: spin.
    #[serde(default)]
    pub table: LockKind,
    /// How a request waits for a cache line (held by a miss until the line holds the data,
    /// across the flash read). Default: spin — the waiting thread blocks its core, the
    /// contention PipeSSD measures. `spin` needs the FIL (and, with bit errors, the ECC) off
    /// the request cores: a core spinning for a line would keep the flash completion that
    /// frees the line from running. `sleep` frees the core for the core's other requests.
    #[serde(default)]
    pub line: LockKind,
    /// What taking a lock costs. Default: 100 cycles and a 100 ns cache-line transfer when
    /// another core held it last (assumptions: an atomic read-modify-write with barriers on a
    /// Cortex-A class core, and a line moving between cores through a shared L2).
    #[serde(default = "default_lock_costs")]
    pub costs: LockCosts,
}

impl Default for LockConfig {
    fn default() -> Self {
        LockConfig { table: LockKind::Spin, line: LockKind::Spin, costs: default_lock_costs() }
    }
}

fn default_lock_costs() -> LockCosts {
    LockCosts { acquire_cycles: 100, transfer: SimDuration::from_nanos(100) }
}

/// Stage queues of 1024 slots, 40 cycles to enqueue and to dequeue, a 100 ns transfer
/// (assumptions, as for the locks: a few stores and loads of a ring's indices and the
/// request's descriptor, and its cache lines moving between cores).
pub(crate) fn default_queue() -> StageQueueSpec {
    StageQueueSpec {
        capacity: 1024,
        enqueue_cycles: 40,
        dequeue_cycles: 40,
        transfer: SimDuration::from_nanos(100),
    }
}

impl Default for ArchitectureConfig {
    fn default() -> Self {
        ArchitectureConfig::Softssd(Softssd::default())
    }
}

impl ArchitectureConfig {
    /// The architecture this configures.
    pub fn get(&self) -> &dyn Architecture {
        match self {
            ArchitectureConfig::Softssd(a) => a,
            ArchitectureConfig::Tradition(a) => a,
            ArchitectureConfig::Pipessd(a) => a,
            ArchitectureConfig::Deepflash(a) => a,
        }
    }

    /// The architecture's name (`softssd`, `tradition-4`, `pipessd`, `deepflash`).
    pub fn name(&self, cores: usize) -> String {
        self.get().name(cores)
    }

    /// The core the FIL runs on, if it has one (none: the flash controller's own sequencer).
    pub fn fil_core(&self) -> Option<usize> {
        self.get().fil_core()
    }

    /// The core the ECC's software correction runs on.
    pub fn ecc_core(&self) -> usize {
        self.get().ecc_core()
    }

    /// Cores whose request coroutines may spin for a cache line (see
    /// [`Architecture::spinning_cores`]).
    pub fn spinning_cores(&self, cores: usize) -> std::ops::Range<usize> {
        self.get().spinning_cores(cores)
    }

    /// Checks that every role names an existing core and that pinned stages do not share one.
    pub fn validate(&self, cores: usize) -> Result<(), ConfigError> {
        self.get().validate(cores)
    }
}

/// Checks that core `c` of field `name` exists on a controller of `cores` cores.
pub(crate) fn exists(name: &str, c: usize, cores: usize) -> Result<(), ConfigError> {
    ensure(c < cores, name, || format!("core {c} does not exist ({cores} cores configured)"))
}

/// Checks that every role's core exists and that no two roles share one.
pub(crate) fn distinct(roles: &[(&str, usize)], cores: usize) -> Result<(), ConfigError> {
    for (i, (a, ca)) in roles.iter().enumerate() {
        exists(a, *ca, cores)?;
        if let Some((b, _)) = roles[..i].iter().find(|(_, cb)| cb == ca) {
            return Err(ConfigError::new(
                *a,
                format!("core {ca} is also {b}: each stage needs a core of its own"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> ArchitectureConfig {
        toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn bad_placements_are_one_line_errors_naming_the_field() {
        let err = |text: &str, cores| parse(text).validate(cores).unwrap_err().to_string();
        assert_eq!(
            err("kind = 'tradition'\ncores = 8", 4),
            "cores: tradition-8 needs 8 cores but the controller has 4 (controller.cores)"
        );
        assert_eq!(err("kind = 'tradition'\ncores = 0", 4), "cores: must be at least 1 (got 0)");
        assert_eq!(
            err("kind = 'pipessd'\npost_core = 1", 4),
            "post_core: core 1 is also ftl_core: each stage needs a core of its own"
        );
        assert_eq!(err("kind = 'pipessd'", 3), "post_core: core 3 does not exist (3 cores configured)");
        assert_eq!(
            err("kind = 'deepflash'\ntrans_cores = [1, 3]", 4),
            "trans_cores: core 3 is also fcmd_core: each stage needs a core of its own"
        );
        assert_eq!(
            err("kind = 'deepflash'\ntrans_cores = []", 4),
            "trans_cores: at least one translation core is needed"
        );
        assert!(
            err("kind = 'tradition'\nfil_core = 3", 4)
                .starts_with("locks.line: spinning for a cache line needs the FIL off the request cores (0..4), but fil_core is core 3"),
        );
        parse("kind = 'tradition'\ncores = 3\nfil_core = 3").validate(4).unwrap();
        parse("kind = 'tradition'\nfil_core = 3\nlocks = { line = 'sleep' }").validate(4).unwrap();
    }

    #[test]
    fn defaults_place_every_role() {
        let t = parse("kind = 'tradition'");
        t.validate(4).unwrap();
        assert_eq!((t.name(4), t.fil_core(), t.ecc_core()), ("tradition-4".into(), None, 0));
        let p = parse("kind = 'pipessd'");
        p.validate(4).unwrap();
        assert_eq!((p.fil_core(), p.ecc_core()), (Some(2), 3));
        let d = parse("kind = 'deepflash'");
        d.validate(4).unwrap();
        assert_eq!((d.name(4), d.fil_core()), ("deepflash".into(), Some(3)));
    }
}
