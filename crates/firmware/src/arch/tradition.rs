//! Tradition-N (one-to-many thread-request mapping): N cores each fetch and run whole
//! requests; the NVMe queues, the data cache's index, the mapping table and every cache line
//! are shared behind locks. A miss holds its line's lock until the line holds the data.

use std::ops::Range;

use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};
use sim::sync::LockKind;
use sim::{CoreId, Cx};

use crate::arch::Architecture;
use crate::arch::config::{LockConfig, exists};
use crate::flow::{Flow, Locks, Table};
use crate::hil::HilLayout;

/// Tradition-N's cores and locks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tradition {
    /// Cores running requests: cores 0 to N-1. Default: every core of the controller.
    #[serde(default)]
    pub cores: Option<usize>,
    /// Core of the FIL's flash scheduling, if it has one (it also runs requests if it is one
    /// of the N). Default: none, the flash controller's own sequencer schedules the
    /// transactions each core submits (the FIL's firmware costs must then be zero).
    #[serde(default)]
    pub fil_core: Option<usize>,
    /// Core of the ECC's software correction. Default: the FIL's core, else core 0.
    #[serde(default)]
    pub ecc_core: Option<usize>,
    /// Request coroutines per core (each core serves this many requests at once; a spinning
    /// one stalls them all). Default: 64.
    #[serde(default = "sixty_four")]
    pub workers_per_core: u32,
    /// The locks and what they cost.
    #[serde(default)]
    pub locks: LockConfig,
}

fn sixty_four() -> u32 {
    64
}

impl Tradition {
    /// N: the cores running requests, on a controller of `cores` cores.
    fn n(&self, cores: usize) -> usize {
        self.cores.unwrap_or(cores)
    }
}

impl Architecture for Tradition {
    fn name(&self, cores: usize) -> String {
        format!("tradition-{}", self.n(cores))
    }

    fn validate(&self, cores: usize) -> Result<(), ConfigError> {
        let n = self.n(cores);
        ensure(n >= 1, "cores", || "must be at least 1 (got 0)".into())?;
        ensure(n <= cores, "cores", || {
            format!("tradition-{n} needs {n} cores but the controller has {cores} (controller.cores)")
        })?;
        ensure(self.workers_per_core >= 1, "workers_per_core", || "must be at least 1 (got 0)".into())?;
        if let Some(c) = self.fil_core {
            exists("fil_core", c, cores)?;
        }
        if let Some(c) = self.ecc_core {
            exists("ecc_core", c, cores)?;
        }
        if let Some(fil) = self.fil_core
            && self.locks.line == LockKind::Spin
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
        Ok(())
    }

    fn fil_core(&self) -> Option<usize> {
        self.fil_core
    }

    fn ecc_core(&self) -> usize {
        self.ecc_core.or(self.fil_core).unwrap_or(0)
    }

    fn home_core(&self) -> usize {
        self.fil_core.unwrap_or(0)
    }

    fn spinning_cores(&self, cores: usize) -> Range<usize> {
        if self.locks.line == LockKind::Spin { 0..self.n(cores) } else { 0..0 }
    }

    fn layout(&self, cores: &[CoreId]) -> HilLayout {
        HilLayout::PerCore { cores: cores[..self.n(cores.len())].to_vec(), workers: self.workers_per_core }
    }

    fn flow(&self, cx: &Cx, _cores: &[CoreId], _logical: u32) -> Flow {
        let l = &self.locks;
        let tables = [Table::Queues, Table::Index, Table::Mapping];
        Flow::plain(cx).with_locks(Locks::new(cx, &tables, l.table, Some(l.line), l.costs))
    }
}
