//! Which firmware architecture runs, and on which cores: the `[architecture]` section.

use serde::{Deserialize, Serialize};
use sim::SimDuration;
use sim::config::{ConfigError, ensure};
use sim::sync::{LockCosts, LockKind, StageQueueSpec};

/// Which architecture, on which cores.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ArchitectureConfig {
    /// SoftSSD: HIL and FTL coroutines (k workers per queue) on one core, the FIL on a second,
    /// the ECC on a third, joined by available / used rings.
    Softssd {
        /// Core of the host interface and FTL. Default: 0.
        #[serde(default)]
        hil_core: usize,
        /// Core of the FIL. Default: 1.
        #[serde(default = "one")]
        fil_core: usize,
        /// Core of the ECC. Default: 2.
        #[serde(default = "two")]
        ecc_core: usize,
    },
    /// Tradition-N (one-to-many thread-request mapping): N cores each fetch and run whole
    /// requests; the data cache, mapping table and queues are shared behind locks.
    Tradition {
        /// Cores running requests: cores 0 to N-1. Default: every core of the controller.
        #[serde(default)]
        cores: Option<usize>,
        /// Core of the FIL's flash scheduling, if it has one (it also runs requests if it is one
        /// of the N). Default: none, the flash controller's own sequencer schedules the
        /// transactions each core submits (the FIL's firmware costs must then be zero).
        #[serde(default)]
        fil_core: Option<usize>,
        /// Core of the ECC's software correction. Default: the FIL's core, else core 0.
        #[serde(default)]
        ecc_core: Option<usize>,
        /// Request coroutines per core (each core serves this many requests at once; a spinning
        /// one stalls them all). Default: 64.
        #[serde(default = "sixty_four")]
        workers_per_core: u32,
        /// The locks and what they cost.
        #[serde(default)]
        locks: LockConfig,
    },
    /// PipeSSD (many-to-one): four stages pinned to four cores, joined by SPSC stage queues,
    /// no locks on the request path; cache management in the last stage, a pilot table in the
    /// FTL stage, a per-line wait list in the FIL stage.
    Pipessd {
        /// NVMe fetch stage (fetch, parse, split). Default: 0.
        #[serde(default)]
        fetch_core: usize,
        /// FTL stage (address translation, pilot table). Default: 1.
        #[serde(default = "one")]
        ftl_core: usize,
        /// FIL stage (wait list, flash scheduling). Default: 2.
        #[serde(default = "two")]
        fil_core: usize,
        /// NVMe post stage (cache management, DMA, completion). Default: 3.
        #[serde(default = "three")]
        post_core: usize,
        /// Core of the ECC's software correction. Default: the post stage's core.
        #[serde(default)]
        ecc_core: Option<usize>,
        /// The stage queues.
        #[serde(default = "default_queue")]
        queue: StageQueueSpec,
    },
    /// A DeepFlash-style many-to-many firmware (FAST'20): firmware functions as threads spread
    /// over the cores — queue gather and completion, address translation partitioned by LPN
    /// range, flash scheduling — with the data cache bypassed when a request's line is
    /// occupied.
    Deepflash {
        /// Queue gather and completion. Default: 0.
        #[serde(default)]
        gather_core: usize,
        /// Address translation, one LPN range per core. Default: [1, 2].
        #[serde(default = "trans_cores")]
        trans_cores: Vec<usize>,
        /// Flash scheduling. Default: 3.
        #[serde(default = "three")]
        fcmd_core: usize,
        /// Core of the ECC's software correction. Default: the flash scheduling core.
        #[serde(default)]
        ecc_core: Option<usize>,
        /// The queues between the functions' cores.
        #[serde(default = "default_queue")]
        queue: StageQueueSpec,
        /// The lock on the shared cache index and what it costs.
        #[serde(default)]
        locks: LockConfig,
    },
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
fn default_queue() -> StageQueueSpec {
    StageQueueSpec {
        capacity: 1024,
        enqueue_cycles: 40,
        dequeue_cycles: 40,
        transfer: SimDuration::from_nanos(100),
    }
}

fn one() -> usize {
    1
}
fn two() -> usize {
    2
}
fn three() -> usize {
    3
}
fn sixty_four() -> u32 {
    64
}
fn trans_cores() -> Vec<usize> {
    vec![1, 2]
}

impl Default for ArchitectureConfig {
    fn default() -> Self {
        ArchitectureConfig::Softssd { hil_core: 0, fil_core: 1, ecc_core: 2 }
    }
}

impl ArchitectureConfig {
    /// The architecture's name (`softssd`, `tradition-4`, `pipessd`, `deepflash`).
    pub fn name(&self, cores: usize) -> String {
        match self {
            ArchitectureConfig::Softssd { .. } => "softssd".into(),
            ArchitectureConfig::Tradition { cores: n, .. } => format!("tradition-{}", n.unwrap_or(cores)),
            ArchitectureConfig::Pipessd { .. } => "pipessd".into(),
            ArchitectureConfig::Deepflash { .. } => "deepflash".into(),
        }
    }

    /// The core the FIL runs on, if it has one (none: the flash controller's own sequencer).
    pub fn fil_core(&self) -> Option<usize> {
        match self {
            ArchitectureConfig::Softssd { fil_core, .. } | ArchitectureConfig::Pipessd { fil_core, .. } => {
                Some(*fil_core)
            }
            ArchitectureConfig::Tradition { fil_core, .. } => *fil_core,
            ArchitectureConfig::Deepflash { fcmd_core, .. } => Some(*fcmd_core),
        }
    }

    /// The core the ECC's software correction runs on.
    pub fn ecc_core(&self) -> usize {
        match self {
            ArchitectureConfig::Softssd { ecc_core, .. } => *ecc_core,
            ArchitectureConfig::Tradition { ecc_core, .. }
            | ArchitectureConfig::Deepflash { ecc_core, .. } => ecc_core.or(self.fil_core()).unwrap_or(0),
            ArchitectureConfig::Pipessd { ecc_core, post_core, .. } => ecc_core.unwrap_or(*post_core),
        }
    }

    /// The cores running requests, for the lock-based architecture (empty for the others).
    pub fn request_cores(&self, cores: usize) -> std::ops::Range<usize> {
        match self {
            ArchitectureConfig::Tradition { cores: n, .. } => 0..n.unwrap_or(cores),
            _ => 0..0,
        }
    }

    /// Whether a request core may spin for a cache line held across a flash read.
    pub fn spins_for_lines(&self) -> bool {
        matches!(self, ArchitectureConfig::Tradition { locks, .. } if locks.line == LockKind::Spin)
    }

    /// Checks that every role names an existing core and that pinned stages do not share one.
    pub fn validate(&self, cores: usize) -> Result<(), ConfigError> {
        let exists = |name: &str, c: usize| {
            ensure(c < cores, name, || format!("core {c} does not exist ({cores} cores configured)"))
        };
        let distinct = |roles: &[(&str, usize)]| -> Result<(), ConfigError> {
            for (i, (a, ca)) in roles.iter().enumerate() {
                exists(a, *ca)?;
                if let Some((b, _)) = roles[..i].iter().find(|(_, cb)| cb == ca) {
                    return Err(ConfigError::new(
                        *a,
                        format!("core {ca} is also {b}: each stage needs a core of its own"),
                    ));
                }
            }
            Ok(())
        };
        match self {
            ArchitectureConfig::Softssd { hil_core, fil_core, ecc_core } => {
                for (name, c) in [("hil_core", hil_core), ("fil_core", fil_core), ("ecc_core", ecc_core)] {
                    exists(name, *c)?;
                }
            }
            ArchitectureConfig::Tradition { cores: n, fil_core, ecc_core, workers_per_core, locks } => {
                let n = n.unwrap_or(cores);
                ensure(n >= 1, "cores", || "must be at least 1 (got 0)".into())?;
                ensure(n <= cores, "cores", || {
                    format!("tradition-{n} needs {n} cores but the controller has {cores} (controller.cores)")
                })?;
                ensure(*workers_per_core >= 1, "workers_per_core", || "must be at least 1 (got 0)".into())?;
                if let Some(c) = fil_core {
                    exists("fil_core", *c)?;
                }
                if let Some(c) = ecc_core {
                    exists("ecc_core", *c)?;
                }
                if let Some(fil) = self.fil_core()
                    && locks.line == LockKind::Spin
                    && fil < n
                {
                    return Err(ConfigError::new(
                        "locks.line",
                        format!(
                            "spinning for a cache line needs the FIL off the request cores (0..{n}), but \
                             fil_core is core {fil}: place it on another core, leave it to the flash \
                             controller (no fil_core), or use line = \"sleep\""
                        ),
                    ));
                }
            }
            ArchitectureConfig::Pipessd { fetch_core, ftl_core, fil_core, post_core, ecc_core, queue } => {
                distinct(&[
                    ("fetch_core", *fetch_core),
                    ("ftl_core", *ftl_core),
                    ("fil_core", *fil_core),
                    ("post_core", *post_core),
                ])?;
                if let Some(c) = ecc_core {
                    exists("ecc_core", *c)?;
                }
                ensure(queue.capacity >= 1, "queue.capacity", || "must be at least 1 (got 0)".into())?;
            }
            ArchitectureConfig::Deepflash {
                gather_core, trans_cores, fcmd_core, ecc_core, queue, ..
            } => {
                ensure(!trans_cores.is_empty(), "trans_cores", || {
                    "at least one translation core is needed".into()
                })?;
                let mut roles = vec![("gather_core", *gather_core), ("fcmd_core", *fcmd_core)];
                roles.extend(trans_cores.iter().map(|&c| ("trans_cores", c)));
                distinct(&roles)?;
                if let Some(c) = ecc_core {
                    exists("ecc_core", *c)?;
                }
                ensure(queue.capacity >= 1, "queue.capacity", || "must be at least 1 (got 0)".into())?;
            }
        }
        Ok(())
    }
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
