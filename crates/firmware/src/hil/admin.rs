//! Admin commands: Identify (controller, namespace), Create / Delete I/O queue pairs, Get
//! Log Page (SMART / health, and the FDP log pages) and, under FDP, the Reclaim Unit Handle
//! Status and Update operations (I/O Management Receive and Send; see `fdp`).

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
    /// Create I/O queue pair `qid` (1-based) with a priority class for weighted arbitration,
    /// bound to NVM set `nvm_set` (Create I/O Submission Queue's NVMSETID; 0: none, the whole
    /// array): the writes it carries are placed on the set's planes.
    CreateIoQueue {
        /// Queue id.
        qid: u16,
        /// Arbitration class.
        priority: Priority,
        /// NVM set identifier (0: none).
        nvm_set: u16,
    },
    /// Defines an NVM set of `planes` (global plane numbers, die by die) and answers its
    /// identifier ([`AdminResult::NvmSet`]); the same planes again answer the same set. Not an
    /// NVMe command: a drive's sets are fixed by its vendor (Identify's NVM Set List); this is
    /// how a simulated host configures them, as MQSim's per-flow plane lists do.
    DefineNvmSet {
        /// The set's planes.
        planes: Vec<u32>,
    },
    /// Delete I/O queue pair `qid`.
    DeleteIoQueue {
        /// Queue id.
        qid: u16,
    },
    /// Get Log Page: SMART / health information.
    GetSmartLog,
    /// Get Log Page 20h: FDP Configurations.
    GetFdpConfigurations,
    /// Get Log Page 21h: Reclaim Unit Handle Usage.
    GetRuhUsage,
    /// Get Log Page 22h: FDP Statistics.
    GetFdpStatistics,
    /// Get Log Page 23h: FDP Events, the host events (`host`) or the controller's.
    GetFdpEvents {
        /// Host events (Log Specific Field bit 0), else controller events.
        host: bool,
    },
    /// I/O Management Receive, Reclaim Unit Handle Status.
    IoManagementReceive,
    /// I/O Management Send, Reclaim Unit Handle Update of these placement identifiers.
    IoManagementSend {
        /// The placement identifiers whose handles move to a fresh reclaim unit.
        pids: Vec<u16>,
    },
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
    /// FDP Configurations log page.
    FdpConfigurations(crate::hil::FdpConfigurationsLog),
    /// Reclaim Unit Handle Usage log page.
    RuhUsage(Vec<crate::hil::RuhUsage>),
    /// FDP Statistics log page.
    FdpStatistics(crate::hil::FdpStatistics),
    /// FDP Events log page, oldest first.
    FdpEvents(Vec<crate::ftl::FdpEvent>),
    /// Reclaim Unit Handle Status descriptors.
    RuhStatus(Vec<crate::hil::RuhStatus>),
    /// The identifier of an NVM set defined.
    NvmSet(u16),
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
            AdminCommand::CreateIoQueue { qid, priority, nvm_set } => {
                match self.create_queue(qid, priority, nvm_set) {
                    Ok(()) => AdminResult::Done,
                    Err(s) => AdminResult::Error(s),
                }
            }
            AdminCommand::DefineNvmSet { planes } => match self.ftl.define_set(&planes) {
                Ok(id) => AdminResult::NvmSet(id as u16),
                Err(why) => AdminResult::Error(Status::InvalidField(why)),
            },
            AdminCommand::DeleteIoQueue { qid } => match self.delete_queue(qid) {
                Ok(()) => AdminResult::Done,
                Err(s) => AdminResult::Error(s),
            },
            AdminCommand::GetSmartLog => AdminResult::Smart(self.smart_log()),
            AdminCommand::GetFdpConfigurations => {
                answer(self.fdp_configurations(), AdminResult::FdpConfigurations)
            }
            AdminCommand::GetRuhUsage => answer(self.ruh_usage(), AdminResult::RuhUsage),
            AdminCommand::GetFdpStatistics => answer(self.fdp_statistics(), AdminResult::FdpStatistics),
            AdminCommand::GetFdpEvents { host } => answer(self.fdp_events(host), AdminResult::FdpEvents),
            AdminCommand::IoManagementReceive => answer(self.ruh_status(), AdminResult::RuhStatus),
            AdminCommand::IoManagementSend { pids } => answer(self.ruh_update(&pids), |()| AdminResult::Done),
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

/// An admin command's answer from what it computed: `ok` of the result, or the error status.
fn answer<T>(r: Result<T, Status>, ok: impl FnOnce(T) -> AdminResult) -> AdminResult {
    r.map_or_else(AdminResult::Error, ok)
}
