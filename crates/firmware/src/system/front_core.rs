//! What every front other than the NVMe controller does alike ([`FrontCore`]): it numbers
//! commands, answers those for a queue that does not exist, times each from its submission to
//! its completion, and counts completions. The front's own work runs inside.

use std::cell::Cell;
use std::future::Future;

use sim::Cx;

use crate::hil::{CommandTiming, HostData, Namespace, NvmeCompletion, Status};
use crate::system::queues::{QueueError, QueueSet};
use crate::trace::Phases;

/// What a front's own work made of a command (see [`FrontCore::serve`]).
#[derive(Debug)]
pub struct Served {
    /// The outcome.
    pub status: Status,
    /// Read data.
    pub data: HostData,
    /// Where the time went.
    pub phases: Phases,
}

/// The context, namespace, I/O queues, command ids and completed count of a front.
pub struct FrontCore {
    cx: Cx,
    ns: Namespace,
    queues: QueueSet,
    next_id: Cell<u64>,
    completed: Cell<u64>,
}

impl FrontCore {
    /// A front exposing `ns` with I/O queues 1..=`queues`, none created yet.
    pub fn new(cx: &Cx, ns: Namespace, queues: u32) -> FrontCore {
        FrontCore {
            cx: cx.clone(),
            ns,
            queues: QueueSet::new(queues),
            next_id: Cell::new(0),
            completed: Cell::new(0),
        }
    }

    /// The simulation context.
    pub fn cx(&self) -> &Cx {
        &self.cx
    }

    /// The namespace it exposes.
    pub fn namespace(&self) -> Namespace {
        self.ns
    }

    /// Commands completed so far.
    pub fn completed(&self) -> u64 {
        self.completed.get()
    }

    /// Whether I/O queue pair `qid` exists.
    pub fn has_queue(&self, qid: u16) -> bool {
        self.queues.has(qid)
    }

    /// Creates I/O queue pair `qid` (1-based); the error says why not.
    pub fn create_queue(&self, qid: u16) -> Result<(), QueueError> {
        self.queues.create(qid)
    }

    /// Runs one command from queue `qid`: numbers it, and answers `InvalidQueue` at once if the
    /// queue does not exist (`work` is then dropped unstarted); otherwise awaits `work` (at
    /// once, so it starts at the command's submission time), counts the command completed, and
    /// completes it with `work`'s outcome, timed from its submission to now.
    pub async fn serve(&self, qid: u16, work: impl Future<Output = Served>) -> NvmeCompletion {
        let submitted = self.cx.now();
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let served = if self.queues.has(qid) {
            let served = work.await;
            self.completed.set(self.completed.get() + 1);
            served
        } else {
            Served { status: Status::InvalidQueue, data: HostData::None, phases: Phases::default() }
        };
        NvmeCompletion {
            status: served.status,
            data: served.data,
            timing: CommandTiming { id, submitted, completed: self.cx.now() },
            phases: served.phases,
            result: 0,
        }
    }
}
