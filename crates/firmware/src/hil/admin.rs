//! Admin commands: Identify (controller, namespace), Create / Delete I/O queue pairs and Get
//! Log Page (SMART / health).

use serde::Serialize;

use crate::hil::controller::Controller;
use crate::hil::nvme::Status;
use crate::hil::queues::Priority;
use crate::hil::smart::SmartLog;

/// An admin command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AdminCommand {
    /// Identify the controller.
    IdentifyController,
    /// Identify namespace 1.
    IdentifyNamespace,
    /// Create I/O queue pair `qid` (1-based) with a priority class for weighted arbitration.
    CreateIoQueue {
        /// Queue id.
        qid: u16,
        /// Arbitration class.
        priority: Priority,
    },
    /// Delete I/O queue pair `qid`.
    DeleteIoQueue {
        /// Queue id.
        qid: u16,
    },
    /// Get Log Page: SMART / health information.
    GetSmartLog,
}

/// Identify Controller data (the fields ssdlab models).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IdentifyController {
    /// Model number.
    pub model: String,
    /// Serial number.
    pub serial: String,
    /// Firmware revision.
    pub firmware: String,
    /// Largest transfer of one command, in bytes.
    pub max_transfer: u64,
    /// I/O queue pairs supported.
    pub io_queues: u32,
    /// Entries per queue.
    pub queue_depth: u32,
    /// Namespaces.
    pub namespaces: u32,
}

/// Identify Namespace data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IdentifyNamespace {
    /// Size in logical blocks.
    pub size: u64,
    /// Capacity in logical blocks.
    pub capacity: u64,
    /// Logical blocks holding data (mapped).
    pub utilisation: u64,
    /// Logical block size in bytes.
    pub lba_bytes: u32,
}

/// The answer to an admin command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum AdminResult {
    /// Identify Controller data.
    Controller(IdentifyController),
    /// Identify Namespace data.
    Namespace(IdentifyNamespace),
    /// SMART / health log.
    Smart(SmartLog),
    /// Done, nothing to return.
    Done,
    /// Failed.
    Error(Status),
}

impl Controller {
    /// Host side: runs an admin command (through the admin queue: doorbell, firmware on the
    /// controller core, completion).
    pub async fn admin(&self, cmd: AdminCommand) -> AdminResult {
        self.cx.sleep(self.link.mmio_latency()).await;
        let costs = &self.cfg.costs;
        self.cx.compute_for(self.cx.cycles(self.core, costs.fetch + costs.parse + costs.completion)).await;
        self.link.transfer(&self.cx, crate::hil::link::Dir::ToHost, 4096).await;
        let result = match cmd {
            AdminCommand::IdentifyController => AdminResult::Controller(IdentifyController {
                model: format!("ssdlab {}", self.ftl.fil().geometry().capacity()),
                serial: "SSDLAB0001".into(),
                firmware: env!("CARGO_PKG_VERSION").into(),
                max_transfer: self.ns.max_transfer,
                io_queues: self.cfg.queues,
                queue_depth: self.cfg.queue_depth,
                namespaces: 1,
            }),
            AdminCommand::IdentifyNamespace => AdminResult::Namespace(IdentifyNamespace {
                size: self.ns.capacity_lbas,
                capacity: self.ns.capacity_lbas,
                utilisation: self.ftl.mapped_units() * self.ns.spu() as u64,
                lba_bytes: self.ns.lba_bytes,
            }),
            AdminCommand::CreateIoQueue { qid, priority } => match self.create_queue(qid, priority) {
                Ok(()) => AdminResult::Done,
                Err(s) => AdminResult::Error(s),
            },
            AdminCommand::DeleteIoQueue { qid } => match self.delete_queue(qid) {
                Ok(()) => AdminResult::Done,
                Err(s) => AdminResult::Error(s),
            },
            AdminCommand::GetSmartLog => AdminResult::Smart(self.smart_log()),
        };
        self.cx.sleep(self.link.mmio_latency()).await;
        result
    }

    /// The SMART / health log as of now.
    pub fn smart_log(&self) -> SmartLog {
        let fil = self.ftl.fil();
        let endurance = self.ftl.rated_pe().unwrap_or(fil.timing().endurance);
        self.smart.borrow().log(
            &fil.erase_counts(),
            endurance,
            self.ftl.spare_percent(),
            self.ftl.read_only(),
        )
    }
}
