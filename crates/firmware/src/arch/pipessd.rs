//! PipeSSD (many-to-one): four stages pinned to four cores (NVMe fetch, FTL, FIL, NVMe post),
//! joined by SPSC stage queues, no locks on the request path; cache management in the last
//! stage, a pilot table in the FTL stage, a per-line wait list in the FIL stage. A request
//! only moves forward, stage by stage.

use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};
use sim::sync::{StageQueue, StageQueueSpec};
use sim::{CoreId, Cx};

use nand::Lpn;

use crate::arch::Architecture;
use crate::arch::config::{default_queue, distinct, exists};
use crate::flow::{Flow, Point, Route};
use crate::hil::HilLayout;

/// PipeSSD's stage cores and queues.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pipessd {
    /// NVMe fetch stage (fetch, parse, split). Default: 0.
    #[serde(default)]
    pub fetch_core: usize,
    /// FTL stage (address translation, pilot table). Default: 1.
    #[serde(default = "one")]
    pub ftl_core: usize,
    /// FIL stage (wait list, flash scheduling). Default: 2.
    #[serde(default = "two")]
    pub fil_core: usize,
    /// NVMe post stage (cache management, DMA, completion). Default: 3.
    #[serde(default = "three")]
    pub post_core: usize,
    /// Core of the ECC's software correction. Default: the post stage's core.
    #[serde(default)]
    pub ecc_core: Option<usize>,
    /// The stage queues.
    #[serde(default = "default_queue")]
    pub queue: StageQueueSpec,
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

impl Architecture for Pipessd {
    fn name(&self, _cores: usize) -> String {
        "pipessd".into()
    }

    fn validate(&self, cores: usize) -> Result<(), ConfigError> {
        distinct(
            &[
                ("fetch_core", self.fetch_core),
                ("ftl_core", self.ftl_core),
                ("fil_core", self.fil_core),
                ("post_core", self.post_core),
            ],
            cores,
        )?;
        if let Some(c) = self.ecc_core {
            exists("ecc_core", c, cores)?;
        }
        ensure(self.queue.capacity >= 1, "queue.capacity", || "must be at least 1 (got 0)".into())
    }

    fn fil_core(&self) -> Option<usize> {
        Some(self.fil_core)
    }

    fn ecc_core(&self) -> usize {
        self.ecc_core.unwrap_or(self.post_core)
    }

    fn home_core(&self) -> usize {
        self.ftl_core
    }

    fn layout(&self, cores: &[CoreId]) -> HilLayout {
        HilLayout::PerCommand { core: cores[self.fetch_core] }
    }

    fn flow(&self, cx: &Cx, cores: &[CoreId], _logical: u32) -> Flow {
        let stages = [self.fetch_core, self.ftl_core, self.fil_core, self.post_core].map(|i| cores[i]);
        let q = |name: &'static str, core| StageQueue::new(cx, name, core, self.queue);
        let queues = [q("fetch -> ftl", stages[1]), q("ftl -> fil", stages[2]), q("fil -> post", stages[3])];
        Flow::plain(cx).with_route(Box::new(Pipeline { stages, queues })).with_wait_list()
    }
}

/// The four stages and the queues into the last three.
struct Pipeline {
    /// Stage cores: fetch, FTL, FIL, post.
    stages: [CoreId; 4],
    /// Into the FTL, FIL and post stages.
    queues: [StageQueue; 3],
}

impl Route for Pipeline {
    fn next_hop(&self, here: CoreId, point: Point, _lpn: Option<Lpn>) -> Option<&StageQueue> {
        let target = match point {
            Point::Fetch => 0,
            Point::Translate => 1,
            Point::Flash => 2,
            Point::Cache | Point::Post => 3,
        };
        // Forward only, stage by stage: a request never goes back up the pipeline (nor moves
        // when it runs on no stage's core).
        let stage = self.stages.iter().position(|&c| c == here)?;
        (stage < target).then(|| &self.queues[stage])
    }

    fn queues(&self) -> &[StageQueue] {
        &self.queues
    }
}
