//! Flexible Data Placement at the host interface (NVMe Base Specification 2.1, 5.2.4 and the
//! log pages of 5.1.12.1.2x): the FDP log pages (FDP Configurations 20h, Reclaim Unit Handle
//! Usage 21h, FDP Statistics 22h, FDP Events 23h) and the Reclaim Unit Handle Status and Update
//! operations of I/O Management Receive and Send. In the specification the last two are I/O
//! commands of the NVM command set; here they are run as admin commands (see
//! [`AdminCommand`](crate::hil::AdminCommand)), at the cost of one.

use serde::Serialize;

use crate::ftl::{FdpEvent, Isolation};
use crate::hil::controller::Controller;
use crate::hil::nvme::Status;

/// One FDP configuration (a descriptor of the FDP Configurations log page, 20h).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FdpConfiguration {
    /// Reclaim Group Identifier Format: bits of a placement identifier naming the group.
    pub rgif: u8,
    /// Number of Reclaim Groups.
    pub nrg: u32,
    /// Number of Reclaim Unit Handles.
    pub nruh: u16,
    /// Max Placement Identifiers (placement handles) a namespace may have.
    pub maxpids: u16,
    /// Number of Namespaces Supported.
    pub nnss: u32,
    /// Reclaim Unit Nominal Size, bytes.
    pub runs: u64,
    /// Estimated Reclaim Unit Time Limit, seconds (0: not reported).
    pub erutl: u32,
    /// Each handle's Reclaim Unit Handle Type: 1h initially isolated, 2h persistently isolated.
    pub ruh_types: Vec<u8>,
}

/// The FDP Configurations log page (20h): the configurations and which one is in use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FdpConfigurationsLog {
    /// The configurations (one: the `[ftl.fdp]` section).
    pub configurations: Vec<FdpConfiguration>,
    /// Index of the configuration in use.
    pub in_use: u16,
}

/// One handle of the Reclaim Unit Handle Usage log page (21h).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuhUsage {
    /// Reclaim Unit Handle Attributes: 0h unused, 1h host specified (a write named it with a
    /// placement identifier), 2h controller specified (only writes without one used it).
    pub ruha: u8,
}

/// The FDP Statistics log page (22h), in bytes (the specification's fields are 128 bits).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FdpStatistics {
    /// Host Bytes with Metadata Written: mapping units the host wrote, in bytes.
    pub hbmw: u64,
    /// Media Bytes with Metadata Written: units programmed by every stream (host data, GC,
    /// translation pages), in bytes.
    pub mbmw: u64,
    /// Media Bytes Erased: blocks erased, in bytes.
    pub mbe: u64,
}

/// One Reclaim Unit Handle Status descriptor (I/O Management Receive, operation 1h).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuhStatus {
    /// Placement Identifier.
    pub pid: u16,
    /// Reclaim Unit Handle Identifier.
    pub ruhid: u16,
    /// Estimated Active Reclaim Unit Time Remaining, seconds (0: not reported).
    pub earutr: u32,
    /// Reclaim Unit Available Media Writes: logical blocks the handle's reclaim unit can still
    /// take.
    pub ruamw: u64,
}

impl Controller {
    /// What an FDP log page or operation answers without FDP.
    fn no_fdp() -> Status {
        Status::InvalidField("Flexible Data Placement is not enabled ([ftl.fdp])".into())
    }

    /// The FDP Configurations log page (20h).
    pub fn fdp_configurations(&self) -> Result<FdpConfigurationsLog, Status> {
        let f = self.ftl.fdp().ok_or_else(Self::no_fdp)?;
        let geo = self.ftl.fil().geometry();
        let ruht = match f.isolation {
            Isolation::Initially => 1,
            Isolation::Persistently => 2,
        };
        Ok(FdpConfigurationsLog {
            configurations: vec![FdpConfiguration {
                rgif: f.rgif() as u8,
                nrg: f.reclaim_groups,
                nruh: f.handles,
                maxpids: f.handles,
                nnss: 1,
                runs: f.ru_pages(geo) * geo.page_bytes() as u64,
                erutl: 0,
                ruh_types: vec![ruht; f.handles as usize],
            }],
            in_use: 0,
        })
    }

    /// The Reclaim Unit Handle Usage log page (21h).
    pub fn ruh_usage(&self) -> Result<Vec<RuhUsage>, Status> {
        self.ftl.fdp().ok_or_else(Self::no_fdp)?;
        let st = self.ftl.stats().fdp.unwrap_or_default();
        Ok(st
            .handles
            .iter()
            .map(|h| RuhUsage {
                ruha: match (h.host_specified, h.host_units) {
                    (0, 0) => 0,
                    (0, _) => 2,
                    _ => 1,
                },
            })
            .collect())
    }

    /// The FDP Statistics log page (22h).
    pub fn fdp_statistics(&self) -> Result<FdpStatistics, Status> {
        self.ftl.fdp().ok_or_else(Self::no_fdp)?;
        let st = self.ftl.stats();
        let geo = self.ftl.fil().geometry();
        let unit = geo.unit_bytes() as u64;
        Ok(FdpStatistics {
            hbmw: st.host_units_written * unit,
            mbmw: st.units_programmed.iter().sum::<u64>() * unit,
            mbe: st.blocks_erased * geo.pages as u64 * geo.page_bytes() as u64,
        })
    }

    /// The FDP Events log page (23h): host events (`host`: RU Not Fully Written, Invalid
    /// Placement Identifier) or controller events (Media Reallocated), oldest first.
    pub fn fdp_events(&self, host: bool) -> Result<Vec<FdpEvent>, Status> {
        self.ftl.fdp().ok_or_else(Self::no_fdp)?;
        Ok(self.ftl.fdp_events().into_iter().filter(|e| e.is_host_event() == host).collect())
    }

    /// I/O Management Receive, Reclaim Unit Handle Status: every placement identifier's
    /// handle and what its reclaim unit can still take.
    pub fn ruh_status(&self) -> Result<Vec<RuhStatus>, Status> {
        self.ftl.fdp().ok_or_else(Self::no_fdp)?;
        let spu = self.ns.spu() as u64;
        Ok(self
            .ftl
            .ruh_states()
            .into_iter()
            .map(|s| RuhStatus { pid: s.pid, ruhid: s.handle, earutr: 0, ruamw: s.ruamw_units * spu })
            .collect())
    }

    /// I/O Management Send, Reclaim Unit Handle Update: each placement identifier's handle
    /// moves to a fresh reclaim unit.
    pub fn ruh_update(&self, pids: &[u16]) -> Result<(), Status> {
        self.ftl.ruh_update(pids).map_err(|bad| match bad {
            Some(p) => Status::InvalidPlacementHandle(p),
            None => Self::no_fdp(),
        })
    }
}
