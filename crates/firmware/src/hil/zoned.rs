//! The Zoned Namespace command set in the controller: every I/O command of a zoned namespace
//! goes through the zone state machine (`hil::zones::Zones`, in logical blocks) before the
//! zoned FTL does its flash work.
//!
//! Command by command (NVMe ZNS Command Set Specification, revision 1.1):
//!
//! - Read: refused across zone boundaries unless the namespace allows it, and from offline
//!   zones; unwritten blocks read as zeroes.
//! - Write, Write Zeroes: at the zone's write pointer, within its capacity; the zone opens
//!   implicitly (closing the least recently opened implicit zone if the open limit needs it).
//! - Zone Append: to a zone's start, at most the Zone Append Size Limit; the completion's
//!   result is the first block written.
//! - Zone Management Send: open, close, finish (the rest of the capacity padded), reset (the
//!   zone's blocks erased), offline, each alone or on every zone (Select All).
//! - Zone Management Receive: Report Zones with its reporting options and partial report.
//! - Flush: every open page padded and programmed. Dataset Management: accepted, nothing
//!   deallocated (a zone's data goes with its reset).

use std::cell::RefCell;

use nand::DataTag;

use crate::ftl::Ftl;
use crate::hil::config::HostInterfaceConfig;
use crate::hil::controller::Controller;
use crate::hil::link::Dir;
use crate::hil::nvme::{HostData, NvmeCommand, Opcode, Status, ZoneOp};
use crate::hil::zones::{Effect, Zones};
use crate::trace::Phases;

/// The zone state machine of a zoned namespace over `ftl` (recovered from what its flash
/// holds), or `None` for a conventional one.
pub(crate) fn zones_of(ftl: &Ftl, cfg: &HostInterfaceConfig) -> Option<RefCell<Zones>> {
    let layout = ftl.zone_layout()?;
    let zc = ftl.zone_config().expect("a zoned FTL has its configuration");
    let spu = ftl.fil().geometry().unit_bytes() as u64 / cfg.lba_size.bytes();
    let mut zones = Zones::new(
        layout.zones,
        layout.size_units * spu,
        layout.capacity_units * spu,
        zc.max_open,
        zc.max_active,
    );
    for (z, w) in ftl.recover_zones().into_iter().enumerate() {
        if w > 0 {
            zones.recover(z as u32, w * spu);
        }
    }
    Some(RefCell::new(zones))
}

impl Controller {
    /// Runs a checked command on the zoned namespace: status, read data, result.
    pub(crate) async fn zoned(&self, cmd: &NvmeCommand, ph: &mut Phases) -> (Status, HostData, u64) {
        let zones = self.zones.as_ref().expect("a zoned namespace");
        let zone_of = |lba: u64| zones.borrow().zone_of(lba);
        let by_zone = matches!(cmd.opcode, Opcode::ZoneManagementSend | Opcode::ZoneManagementReceive);
        let all = matches!(cmd.zone, Some(ZoneOp::Send { all: true, .. }));
        if by_zone && !all && cmd.slba >= self.ns.capacity_lbas {
            return (Status::LbaOutOfRange, HostData::None, 0);
        }
        match cmd.opcode {
            Opcode::Read => {
                let across = self.ftl.zone_config().is_some_and(|c| c.cross_zone_reads);
                if let Err(s) = zones.borrow().check_read(cmd.slba, cmd.nlb as u64, across) {
                    return (s, HostData::None, 0);
                }
                let parts = self.ns.split(cmd.slba, cmd.nlb);
                let lpns: Vec<nand::Lpn> = parts.iter().map(|p| p.lpn).collect();
                let units = self.ftl.zone_read(&lpns, ph).await;
                match self.ns.read_data(&parts, &units) {
                    Ok(data) => {
                        self.dma(Dir::ToHost, cmd.nlb, ph).await;
                        (Status::Success, data, 0)
                    }
                    Err(s) => (s, HostData::None, 0),
                }
            }
            Opcode::Write | Opcode::WriteZeroes | Opcode::ZoneAppend => {
                let append = cmd.opcode == Opcode::ZoneAppend;
                if append {
                    let limit = self.append_limit();
                    if self.ns.bytes(cmd.nlb) > limit {
                        let msg = format!(
                            "zone append of {} bytes exceeds the limit of {limit}",
                            self.ns.bytes(cmd.nlb)
                        );
                        return (Status::InvalidField(msg), HostData::None, 0);
                    }
                }
                let zone = zone_of(cmd.slba);
                self.ftl.zone_idle(zone).await;
                // Refused before the data moves if it cannot be written.
                let checked = match append {
                    true => zones.borrow().check_append(cmd.slba, cmd.nlb as u64),
                    false => zones.borrow().check_write(cmd.slba, cmd.nlb as u64),
                };
                if let Err(s) = checked {
                    return (s, HostData::None, 0);
                }
                if cmd.opcode != Opcode::WriteZeroes {
                    self.dma(Dir::ToDevice, cmd.nlb, ph).await;
                }
                // The write pointer moves and the units enter the zone's buffer with no await
                // between: writes to a zone keep their order.
                let at = match append {
                    true => zones.borrow_mut().append(cmd.slba, cmd.nlb as u64),
                    false => zones.borrow_mut().write(cmd.slba, cmd.nlb as u64).map(|_| cmd.slba),
                };
                let at = match at {
                    Ok(at) => at,
                    Err(s) => return (s, HostData::None, 0), // the zone changed meanwhile
                };
                // A Write's units are the command's own; an append's or a Write Zeroes' are a
                // write at the block the zone gave (the payload copied only for an append).
                let units = match cmd.opcode {
                    Opcode::Write => self.ns.unit_writes(cmd).collect(),
                    op => {
                        let data = match op {
                            Opcode::WriteZeroes if self.ns.payload => {
                                HostData::Bytes(vec![0; self.ns.bytes(cmd.nlb) as usize])
                            }
                            Opcode::WriteZeroes => HostData::Tags(vec![DataTag(0); cmd.nlb as usize]),
                            _ => cmd.data.clone(),
                        };
                        self.ns.unit_writes(&NvmeCommand::write(at, cmd.nlb, data)).collect()
                    }
                };
                self.ftl.zone_write(zone, units, cmd.fua, ph).await;
                (Status::Success, HostData::None, if append { at } else { 0 })
            }
            Opcode::Flush => {
                let t0 = self.cx.now();
                self.ftl.zone_flush().await;
                ph.cache += self.cx.now().since(t0);
                (Status::Success, HostData::None, 0)
            }
            Opcode::DatasetManagement => (Status::Success, HostData::None, 0),
            Opcode::ZoneManagementSend => {
                let Some(ZoneOp::Send { action, all }) = cmd.zone else {
                    return (
                        Status::InvalidField("zone management send without an action".into()),
                        HostData::None,
                        0,
                    );
                };
                if !all {
                    self.ftl.zone_idle(zone_of(cmd.slba)).await;
                }
                let effects = match zones.borrow_mut().send(cmd.slba, action, all) {
                    Ok(e) => e,
                    Err(s) => return (s, HostData::None, 0),
                };
                let spu = self.ns.spu() as u64;
                let t0 = self.cx.now();
                sim::join_all(effects.into_iter().map(|e| async move {
                    match e {
                        Effect::None => {}
                        Effect::Reset { zone, written } => self.ftl.zone_reset(zone, written / spu).await,
                        Effect::Finish { zone, from } => self.ftl.zone_finish(zone, from / spu).await,
                    }
                }))
                .await;
                ph.cache += self.cx.now().since(t0);
                (Status::Success, HostData::None, 0)
            }
            Opcode::ZoneManagementReceive => {
                let Some(ZoneOp::Receive { filter, partial, max }) = cmd.zone else {
                    return (
                        Status::InvalidField("zone management receive without a report".into()),
                        HostData::None,
                        0,
                    );
                };
                let (descriptors, count) = zones.borrow().report(cmd.slba, filter, partial, max);
                // A 64-byte header, then 64 bytes a descriptor.
                let t0 = self.cx.now();
                self.link.transfer(&self.cx, Dir::ToHost, 64 * (1 + descriptors.len() as u64)).await;
                ph.dma += self.cx.now().since(t0);
                (Status::Success, HostData::Zones(descriptors), count)
            }
        }
    }

    /// Takes zone `zone` out of writing (`ReadOnly`) or out of use (`Offline`), as a media
    /// failure would (fault injection for tests and experiments). Panics on a conventional
    /// namespace or a state other than those two.
    pub fn fail_zone(&self, zone: u32, state: crate::hil::ZoneState) {
        assert!(matches!(state, crate::hil::ZoneState::ReadOnly | crate::hil::ZoneState::Offline));
        self.zones.as_ref().expect("a zoned namespace").borrow_mut().fail(zone, state);
    }

    /// The zones in the report (`None` for a conventional namespace).
    pub fn zone_report(&self) -> Option<crate::ftl::zoned::ZoneReport> {
        let zones = self.zones.as_ref()?.borrow();
        let lba = self.ns.lba_bytes as u64;
        Some(crate::ftl::zoned::ZoneReport {
            zones: zones.count(),
            zone_size: zones.size * lba,
            zone_capacity: zones.capacity * lba,
            by_state: zones.census(),
            stats: self.ftl.zone_stats().unwrap_or_default(),
        })
    }

    /// The Zone Append Size Limit, bytes.
    fn append_limit(&self) -> u64 {
        let cfg = self.ftl.zone_config().and_then(|c| c.append_limit);
        cfg.map_or(self.ns.max_transfer, |b| b.bytes())
    }
}
