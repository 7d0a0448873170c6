//! Where a host submits commands: the NVMe controller of an SSD, or any other [`BlockFront`]
//! (a bridge, a host-side FTL's block driver).

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use sim::Cx;

use crate::hil::{AdminCommand, AdminResult, Controller, Namespace, NvmeCommand, NvmeCompletion, Priority};
use crate::system::front_core::{FrontCore, Served};
use crate::system::queues::QueueError;

/// A boxed future borrowing its front.
pub type FrontFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// A block device front other than the NVMe controller.
///
/// Host drivers reach it through [`Front`]: [`Front::create_queue`] once per queue pair before
/// submitting to it, then [`Front::submit`] from any number of tasks, which runs the command
/// through [`FrontCore::serve`] (numbering, queue check, timing, counting) around
/// [`run`](Self::run). An implementer answers every command with a status (device outcomes are
/// statuses, never panics) and must not block the simulation (every wait is an await).
pub trait BlockFront {
    /// What every front keeps alike: the context, the namespace, the queues, command ids and
    /// the completed count.
    fn core(&self) -> &FrontCore;
    /// The front's own work for `cmd` from queue `qid` (which exists), from the host driver's
    /// submission to the completion the host sees.
    fn run(&self, qid: u16, cmd: NvmeCommand) -> FrontFuture<'_, Served>;
}

/// A system's front: the NVMe controller (no allocation per command) or another front.
#[derive(Clone)]
pub enum Front {
    /// An SSD's NVMe controller.
    Nvme(Rc<Controller>),
    /// A bridge, a host-side FTL's driver, ...
    Other(Rc<dyn BlockFront>),
}

/// Why a system without an NVMe controller cannot split a CMT between flows.
const NO_CMT: &str = "this system has no NVMe controller with a mapping cache to partition between flows";

impl Front {
    /// The simulation context.
    pub fn cx(&self) -> &Cx {
        match self {
            Front::Nvme(c) => c.cx(),
            Front::Other(f) => f.core().cx(),
        }
    }

    /// The namespace it exposes.
    pub fn namespace(&self) -> Namespace {
        match self {
            Front::Nvme(c) => c.namespace(),
            Front::Other(f) => f.core().namespace(),
        }
    }

    /// Namespace size in logical blocks.
    pub fn capacity_lbas(&self) -> u64 {
        self.namespace().capacity_lbas
    }

    /// Logical block size in bytes.
    pub fn lba_bytes(&self) -> u32 {
        self.namespace().lba_bytes
    }

    /// Mapping unit size in bytes.
    pub fn unit_bytes(&self) -> u32 {
        self.namespace().unit_bytes
    }

    /// Whether data moves as bytes rather than tags.
    pub fn payload(&self) -> bool {
        self.namespace().payload
    }

    /// Commands completed so far.
    pub fn completed(&self) -> u64 {
        match self {
            Front::Nvme(c) => c.completed(),
            Front::Other(f) => f.core().completed(),
        }
    }

    /// Whether I/O queue pair `qid` exists.
    pub fn has_queue(&self, qid: u16) -> bool {
        match self {
            Front::Nvme(c) => c.has_queue(qid),
            Front::Other(f) => f.core().has_queue(qid),
        }
    }

    /// Creates I/O queue pair `qid` (medium priority, no NVM set).
    pub async fn create_queue(&self, qid: u16) -> Result<(), QueueError> {
        self.create_queue_with(qid, Priority::Medium, None).await
    }

    /// Creates I/O queue pair `qid` in arbitration class `priority`, its writes confined to
    /// `planes` if given (an NVM set of those planes, defined first). Only an NVMe controller
    /// takes a class other than medium or a plane list. An NVMe queue `qid` that already exists
    /// is deleted first when it is asked for a class other than medium or for planes, so that
    /// it gets them (a run after another on the same device).
    pub async fn create_queue_with(
        &self,
        qid: u16,
        priority: Priority,
        planes: Option<&[u32]>,
    ) -> Result<(), QueueError> {
        match self {
            Front::Nvme(c) => {
                if (priority != Priority::Medium || planes.is_some()) && c.has_queue(qid) {
                    match c.admin(AdminCommand::DeleteIoQueue { qid }).await {
                        AdminResult::Done => {}
                        AdminResult::Error(status) => return Err(QueueError::Refused(status)),
                        r => unreachable!("Delete I/O Queue answers done or an error, not {r:?}"),
                    }
                }
                let nvm_set = match planes {
                    None => 0,
                    Some(planes) => {
                        match c.admin(AdminCommand::DefineNvmSet { planes: planes.to_vec() }).await {
                            AdminResult::NvmSet(id) => id,
                            AdminResult::Error(status) => return Err(QueueError::Refused(status)),
                            r => unreachable!("Define NVM Set answers a set or an error, not {r:?}"),
                        }
                    }
                };
                match c.admin(AdminCommand::CreateIoQueue { qid, priority, nvm_set }).await {
                    AdminResult::Done => Ok(()),
                    AdminResult::Error(status) => Err(QueueError::Refused(status)),
                    r => unreachable!("Create I/O Queue answers done or an error, not {r:?}"),
                }
            }
            Front::Other(_) if planes.is_some() => Err(QueueError::Unsupported(
                "this system has no NVMe controller to confine a queue's writes to planes".into(),
            )),
            Front::Other(_) if priority != Priority::Medium => Err(QueueError::Unsupported(
                "this system has no NVMe controller to give a queue a priority class".into(),
            )),
            Front::Other(f) => f.core().create_queue(qid),
        }
    }

    /// Makes a precondition's fill place the logical blocks `lbas` on `planes` (an NVM set of
    /// them, defined now): a confined flow's data is on its planes before it runs. Call before
    /// the device is aged; only an NVMe controller's FTL takes it.
    pub fn confine_fill(&self, planes: &[u32], lbas: std::ops::Range<u64>) -> Result<(), QueueError> {
        match self {
            Front::Nvme(c) => {
                let set = c
                    .ftl
                    .define_set(planes)
                    .map_err(|why| QueueError::Refused(crate::hil::Status::InvalidField(why)))?;
                let spu = (c.ns.unit_bytes / c.ns.lba_bytes) as u64;
                let first = nand::Lpn((lbas.start / spu) as u32);
                let end = nand::Lpn(lbas.end.div_ceil(spu) as u32);
                c.ftl.confine_fill(first..end, set);
                Ok(())
            }
            Front::Other(_) => Err(QueueError::Unsupported(
                "this system has no NVMe controller to confine a flow's data to planes".into(),
            )),
        }
    }

    /// Tells the device which flow each I/O queue serves (`queue_flows[q - 1]`) out of `flows`,
    /// and so splits its data cache as `ftl.cache.partition` says (a shared cache: nothing
    /// changes). Only an NVMe controller's FTL has a cache to split.
    pub fn bind_flows(&self, queue_flows: &[Option<u32>], flows: u32) -> Result<(), String> {
        match self {
            Front::Nvme(c) => c.ftl.bind_flows(queue_flows, flows),
            Front::Other(_) => {
                Err("this system has no NVMe controller with a data cache to partition between flows".into())
            }
        }
    }

    /// Tells the device which flow each I/O queue serves, only so that it counts flash work per
    /// flow (`FilStats::by_flow`); a system without an NVMe controller's FTL counts none.
    pub fn attribute_flows(&self, queue_flows: &[Option<u32>], flows: u32) {
        if let Front::Nvme(c) = self {
            c.ftl.attribute_flows(queue_flows, flows);
        }
    }

    /// Whether `flows` flows can share the device's data cache as `ftl.cache.partition` says
    /// (the number of shares, the lines each gets), checked before a run.
    pub fn check_flows(&self, flows: u32) -> Result<(), String> {
        match self {
            Front::Nvme(c) => c.ftl.check_partition(flows),
            Front::Other(_) => {
                Err("this system has no NVMe controller with a data cache to partition between flows".into())
            }
        }
    }

    /// Splits the device's CMT between `flows` flows as `ftl.mapping.partition` says (shared,
    /// or no CMT: nothing changes); the flows' queues must be bound first
    /// ([`attribute_flows`](Self::attribute_flows)).
    pub fn partition_cmt(&self, flows: u32) -> Result<(), String> {
        match self {
            Front::Nvme(c) => c.ftl.partition_cmt(flows),
            Front::Other(_) => Err(NO_CMT.into()),
        }
    }

    /// Whether `flows` flows can share the device's CMT as `ftl.mapping.partition` says (the
    /// number of shares, the segments each gets), checked before a run.
    pub fn check_cmt_flows(&self, flows: u32) -> Result<(), String> {
        match self {
            Front::Nvme(c) => c.ftl.check_cmt_partition(flows),
            Front::Other(_) => Err(NO_CMT.into()),
        }
    }

    /// Each of `flows` flows' CMT lookups, (hits, misses) (`None` without a CMT).
    pub fn cmt_flows(&self, flows: u32) -> Option<Vec<(u64, u64)>> {
        match self {
            Front::Nvme(c) => c.ftl.cmt_flows(flows),
            Front::Other(_) => None,
        }
    }

    /// Segments each CMT partition holds, one per flow (empty when the CMT is shared).
    pub fn cmt_partitions(&self) -> Vec<u32> {
        match self {
            Front::Nvme(c) => c.ftl.cmt_partitions(),
            Front::Other(_) => Vec::new(),
        }
    }

    /// The data cache's partitions, one per flow, with their lines and reads (empty when the
    /// cache is shared or the system has none).
    pub fn cache_partitions(&self) -> Vec<crate::ftl::PartCounts> {
        match self {
            Front::Nvme(c) => c.ftl.cache_partitions(),
            Front::Other(_) => Vec::new(),
        }
    }

    /// Runs `cmd` from queue `qid` to its completion.
    pub async fn submit(&self, qid: u16, cmd: NvmeCommand) -> NvmeCompletion {
        match self {
            Front::Nvme(c) => c.submit(qid, cmd).await,
            Front::Other(f) => f.core().serve(qid, f.run(qid, cmd)).await,
        }
    }
}
