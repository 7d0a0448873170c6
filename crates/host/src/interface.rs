//! How the host reaches the device: NVMe queue pairs (each worker its own, many commands in
//! flight) or a legacy synchronous path in the manner of AHCI/SATA: one command port shared by
//! every worker, each worker waiting for its command before it issues the next, and the port
//! holding one command at a time (or 32 with native command queueing).
//!
//! ```text
//!   nvme:        worker 1 ──QD n──▶ SQ1 ─┐
//!                worker 2 ──QD n──▶ SQ2 ─┴─▶ device
//!   legacy(ncq): worker 1 ──1──┐
//!                worker 2 ──1──┴─▶ port (1 or 32 slots; the rest wait in the host) ─▶ device
//! ```

use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The host interface of a run.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostInterface {
    /// NVMe: each worker (job clone) on its own queue pair, `iodepth` commands in flight.
    #[default]
    Nvme,
    /// Legacy synchronous (AHCI/SATA-like): one outstanding command per worker, one port
    /// shared by all, holding one command at a time.
    Legacy,
    /// Legacy with native command queueing: the port holds up to 32 commands.
    LegacyNcq,
}

impl HostInterface {
    /// Commands the port holds at once (`None`: no port, NVMe).
    pub fn port_slots(self) -> Option<u32> {
        match self {
            HostInterface::Nvme => None,
            HostInterface::Legacy => Some(1),
            HostInterface::LegacyNcq => Some(32),
        }
    }

    /// Whether workers issue synchronously through a shared port.
    pub fn is_legacy(self) -> bool {
        self != HostInterface::Nvme
    }

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            HostInterface::Nvme => "nvme",
            HostInterface::Legacy => "legacy",
            HostInterface::LegacyNcq => "legacy-ncq",
        }
    }
}

impl FromStr for HostInterface {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "nvme" => Ok(HostInterface::Nvme),
            "legacy" => Ok(HostInterface::Legacy),
            "legacy-ncq" => Ok(HostInterface::LegacyNcq),
            _ => Err(format!("unknown host interface `{s}` (expected nvme, legacy or legacy-ncq)")),
        }
    }
}

/// A legacy command port: at most as many commands at the device as it has slots, the rest
/// waiting in the host in FIFO order.
pub(crate) type Port = firmware::system::Slots;
