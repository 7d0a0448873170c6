//! A DeepFlash-style many-to-many firmware (FAST'20): firmware functions as threads spread over
//! the cores (queue gather and completion, address translation partitioned by LPN range, flash
//! scheduling), with the data cache bypassed when a request's line is occupied. The mapping is
//! partitioned, so only the cache index is shared behind a lock.

use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};
use sim::sync::{StageQueue, StageQueueSpec};
use sim::{CoreId, Cx};

use nand::Lpn;

use crate::arch::Architecture;
use crate::arch::config::{LockConfig, default_queue, distinct, exists};
use crate::flow::{Flow, Locks, Occupied, Point, Route, Table};
use crate::hil::HilLayout;

/// DeepFlash's function cores, queues and lock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Deepflash {
    /// Queue gather and completion. Default: 0.
    #[serde(default)]
    pub gather_core: usize,
    /// Address translation, one LPN range per core. Default: [1, 2].
    #[serde(default = "trans_cores")]
    pub trans_cores: Vec<usize>,
    /// Flash scheduling. Default: 3.
    #[serde(default = "three")]
    pub fcmd_core: usize,
    /// Core of the ECC's software correction. Default: the flash scheduling core.
    #[serde(default)]
    pub ecc_core: Option<usize>,
    /// The queues between the functions' cores.
    #[serde(default = "default_queue")]
    pub queue: StageQueueSpec,
    /// The lock on the shared cache index and what it costs.
    #[serde(default)]
    pub locks: LockConfig,
}

fn three() -> usize {
    3
}
fn trans_cores() -> Vec<usize> {
    vec![1, 2]
}

impl Architecture for Deepflash {
    fn name(&self, _cores: usize) -> String {
        "deepflash".into()
    }

    fn validate(&self, cores: usize) -> Result<(), ConfigError> {
        ensure(!self.trans_cores.is_empty(), "trans_cores", || {
            "at least one translation core is needed".into()
        })?;
        let mut roles = vec![("gather_core", self.gather_core), ("fcmd_core", self.fcmd_core)];
        roles.extend(self.trans_cores.iter().map(|&c| ("trans_cores", c)));
        distinct(&roles, cores)?;
        if let Some(c) = self.ecc_core {
            exists("ecc_core", c, cores)?;
        }
        ensure(self.queue.capacity >= 1, "queue.capacity", || "must be at least 1 (got 0)".into())
    }

    fn fil_core(&self) -> Option<usize> {
        Some(self.fcmd_core)
    }

    fn ecc_core(&self) -> usize {
        self.ecc_core.unwrap_or(self.fcmd_core)
    }

    fn home_core(&self) -> usize {
        self.trans_cores[0]
    }

    fn layout(&self, cores: &[CoreId]) -> HilLayout {
        HilLayout::PerCommand { core: cores[self.gather_core] }
    }

    fn flow(&self, cx: &Cx, cores: &[CoreId], logical: u32) -> Flow {
        let (gather, fcmd) = (cores[self.gather_core], cores[self.fcmd_core]);
        let trans: Vec<CoreId> = self.trans_cores.iter().map(|&c| cores[c]).collect();
        let mut into = vec![gather, fcmd];
        into.extend(trans.iter().copied());
        let queues = into
            .iter()
            .map(|&c| StageQueue::new(cx, format!("into core {}", c.index()), c, self.queue))
            .collect();
        let range = logical.div_ceil(trans.len() as u32).max(1);
        let l = &self.locks;
        Flow::plain(cx)
            .with_route(Box::new(Functions { gather, trans, fcmd, queues, range }))
            .with_locks(Locks::new(cx, &[Table::Index], l.table, None, l.costs))
            .with_occupied(Occupied::Bypass)
    }
}

/// DeepFlash's function threads.
struct Functions {
    gather: CoreId,
    trans: Vec<CoreId>,
    fcmd: CoreId,
    /// One queue into each function core (several producers share it).
    queues: Vec<StageQueue>,
    /// LPNs per translation core's range.
    range: u32,
}

impl Route for Functions {
    fn next_hop(&self, here: CoreId, point: Point, lpn: Option<Lpn>) -> Option<&StageQueue> {
        let to = match point {
            Point::Fetch | Point::Post => self.gather,
            Point::Translate => {
                let l = lpn.map_or(0, |l| l.0);
                self.trans[((l / self.range) as usize).min(self.trans.len() - 1)]
            }
            Point::Flash => self.fcmd,
            Point::Cache => return None, // the cache is handled where the request is
        };
        if here == to || here.is_unbound() {
            return None;
        }
        Some(self.queues.iter().find(|q| q.core() == to).expect("a queue into every function core"))
    }

    fn queues(&self) -> &[StageQueue] {
        &self.queues
    }
}
