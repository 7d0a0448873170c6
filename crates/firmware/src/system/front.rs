//! Where a host submits commands: the NVMe controller of an SSD, or any other [`BlockFront`]
//! (a bridge, a host-side FTL's block driver).

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use sim::Cx;

use crate::hil::{
    AdminCommand, AdminResult, Controller, HostData, NvmeCommand, NvmeCompletion, Opcode, Priority, Status,
};

/// A boxed future borrowing its front.
pub type FrontFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// A block device front other than the NVMe controller.
///
/// Host drivers call it from host tasks: [`create_queue`](Self::create_queue) once per queue
/// pair before submitting to it, then [`submit`](Self::submit) from any number of tasks. An
/// implementer answers every command with a completion (device outcomes are statuses, never
/// panics), fills in the completion's timing (`submitted` as given, `completed` when the host
/// sees it), and must not block the simulation (every wait is an await).
pub trait BlockFront {
    /// The simulation context it runs in.
    fn cx(&self) -> &Cx;
    /// Namespace size in logical blocks.
    fn capacity_lbas(&self) -> u64;
    /// Logical block size in bytes.
    fn lba_bytes(&self) -> u32;
    /// Mapping unit size in bytes (the granularity of trims).
    fn unit_bytes(&self) -> u32;
    /// Whether data moves as bytes (payload stores) rather than tags.
    fn payload(&self) -> bool;
    /// Commands completed so far.
    fn completed(&self) -> u64;
    /// Whether I/O queue pair `qid` exists.
    fn has_queue(&self, qid: u16) -> bool;
    /// Creates I/O queue pair `qid` (1-based); the error says why not.
    fn create_queue(&self, qid: u16) -> FrontFuture<'_, Result<(), String>>;
    /// Runs `cmd` from queue `qid` to its completion.
    fn submit(&self, qid: u16, cmd: NvmeCommand) -> FrontFuture<'_, NvmeCompletion>;
}

/// A system's front: the NVMe controller (no allocation per command) or another front.
#[derive(Clone)]
pub enum Front {
    /// An SSD's NVMe controller.
    Nvme(Rc<Controller>),
    /// A bridge, a host-side FTL's driver, ...
    Other(Rc<dyn BlockFront>),
}

impl Front {
    /// The simulation context.
    pub fn cx(&self) -> &Cx {
        match self {
            Front::Nvme(c) => c.cx(),
            Front::Other(f) => f.cx(),
        }
    }

    /// Namespace size in logical blocks.
    pub fn capacity_lbas(&self) -> u64 {
        match self {
            Front::Nvme(c) => c.capacity_lbas(),
            Front::Other(f) => f.capacity_lbas(),
        }
    }

    /// Logical block size in bytes.
    pub fn lba_bytes(&self) -> u32 {
        match self {
            Front::Nvme(c) => c.lba_bytes(),
            Front::Other(f) => f.lba_bytes(),
        }
    }

    /// Mapping unit size in bytes.
    pub fn unit_bytes(&self) -> u32 {
        match self {
            Front::Nvme(c) => c.unit_bytes(),
            Front::Other(f) => f.unit_bytes(),
        }
    }

    /// Whether data moves as bytes rather than tags.
    pub fn payload(&self) -> bool {
        match self {
            Front::Nvme(c) => c.payload(),
            Front::Other(f) => f.payload(),
        }
    }

    /// Commands completed so far.
    pub fn completed(&self) -> u64 {
        match self {
            Front::Nvme(c) => c.completed(),
            Front::Other(f) => f.completed(),
        }
    }

    /// Whether I/O queue pair `qid` exists.
    pub fn has_queue(&self, qid: u16) -> bool {
        match self {
            Front::Nvme(c) => c.has_queue(qid),
            Front::Other(f) => f.has_queue(qid),
        }
    }

    /// Creates I/O queue pair `qid`.
    pub async fn create_queue(&self, qid: u16) -> Result<(), String> {
        match self {
            Front::Nvme(c) => {
                match c.admin(AdminCommand::CreateIoQueue { qid, priority: Priority::Medium }).await {
                    AdminResult::Done => Ok(()),
                    r => Err(format!("{r:?}")),
                }
            }
            Front::Other(f) => f.create_queue(qid).await,
        }
    }

    /// Runs `cmd` from queue `qid` to its completion.
    pub async fn submit(&self, qid: u16, cmd: NvmeCommand) -> NvmeCompletion {
        match self {
            Front::Nvme(c) => c.submit(qid, cmd).await,
            Front::Other(f) => f.submit(qid, cmd).await,
        }
    }
}

/// Checks a host command against a namespace of `capacity_lbas` blocks of `lba_bytes` taking
/// transfers of at most `max_transfer` bytes: the status a front answers a malformed command
/// with, before any work.
pub fn check_command(
    cmd: &NvmeCommand,
    capacity_lbas: u64,
    lba_bytes: u32,
    max_transfer: u64,
) -> Result<(), Status> {
    let in_range = |s: u64, n: u32| s.checked_add(n as u64).is_some_and(|e| e <= capacity_lbas);
    match cmd.opcode {
        Opcode::Flush => Ok(()),
        Opcode::DatasetManagement => match cmd.ranges.iter().all(|&(s, n)| in_range(s, n)) {
            true if !cmd.ranges.is_empty() && cmd.ranges.len() <= 256 => Ok(()),
            true => Err(Status::InvalidField(format!("{} ranges (1 to 256 allowed)", cmd.ranges.len()))),
            false => Err(Status::LbaOutOfRange),
        },
        Opcode::Read | Opcode::Write | Opcode::WriteZeroes => {
            let bytes = cmd.nlb as u64 * lba_bytes as u64;
            if cmd.nlb == 0 {
                Err(Status::InvalidField("zero-length transfer".into()))
            } else if cmd.opcode != Opcode::WriteZeroes && bytes > max_transfer {
                Err(Status::InvalidField(format!("{bytes} bytes exceed the maximum transfer size")))
            } else if !in_range(cmd.slba, cmd.nlb) {
                Err(Status::LbaOutOfRange)
            } else if matches!(&cmd.data, HostData::Bytes(b) if b.len() as u64 != bytes) {
                Err(Status::InvalidField("write data does not match the transfer length".into()))
            } else {
                Ok(())
            }
        }
    }
}
