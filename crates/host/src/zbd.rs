//! fio's `zonemode=zbd` on a zoned namespace: the host's view of the zones (read from the
//! device with Report Zones at the start, then kept up to date by the writes and resets it
//! issues), the choice of the zone each write goes to, and the zone resets fio makes.
//!
//! As fio does (its HOWTO, "zonemode=zbd", and `zbd.c`): a write goes to the write pointer of
//! the zone its offset falls in, shortened to the zone's remaining capacity; at most one write
//! is in flight per zone (fio locks a zone for a write, since a device may reorder commands);
//! with `max_open_zones` the job's writes keep to that many zones, a new one opened when one
//! fills; a full zone sends the write to the next zone that is not full, and when every zone
//! of the job's range is full the zone is reset first; with `zone_reset_threshold` zones are
//! also reset, one before every `1 / zone_reset_frequency` writes, while the range holds more
//! than that fraction of its capacity. Reads of unwritten blocks move into written data
//! unless `read_beyond_wp` is set.

use std::cell::{Cell, RefCell};
use std::ops::Range;

use firmware::hil::{HostData, NvmeCommand, Status, ZoneAction, ZoneFilter, ZoneState};
use firmware::system::{Front, System};
use sim::sync::Notify;

use crate::run::RunError;
use crate::workload::{JobSpec, ZbdOptions};

/// One zone as the host tracks it.
#[derive(Copy, Clone, Debug)]
struct HostZone {
    /// Bytes written from the zone's start.
    wp: u64,
    /// A write (or reset) of it is in flight.
    busy: bool,
    /// Offline or read-only: not written to.
    dead: bool,
}

/// The zones of the namespace, shared by every zbd job of a run.
pub(crate) struct ZoneBook {
    /// Zone size and capacity, bytes.
    size: u64,
    cap: u64,
    zones: RefCell<Vec<HostZone>>,
    /// The zones being written (`max_open_zones`), oldest first.
    open: RefCell<Vec<u32>>,
    /// Device limit on open zones (0: none).
    device_max_open: u32,
    /// Host-side zones over a conventional namespace (a reset deallocates).
    emulated: bool,
    freed: Notify,
    writes: Cell<u64>,
    /// Zone resets issued.
    pub resets: Cell<u64>,
}

impl ZoneBook {
    /// Reads the zones of `dev` (through queue 1, which must exist), or says why the jobs
    /// cannot run in zbd mode there. On a conventional namespace the jobs' `zonesize` makes
    /// host-side zones (ssdlab's extension, for comparing the same job on a zoned drive and
    /// its conventional twin): every zone starts empty, and a reset is a deallocate of the zone.
    pub fn read(dev: &dyn System, jobs: &[JobSpec]) -> Result<ZoneBook, RunError> {
        if dev.config().ftl.zoned_ns().is_none() {
            return ZoneBook::emulated(dev, jobs);
        }
        let front = dev.front();
        let f = front.clone();
        let report = dev.sim().block_on(async move {
            f.submit(1, NvmeCommand::report_zones(0, ZoneFilter::All, false, u32::MAX)).await
        })?;
        let lba = front.lba_bytes() as u64;
        let descriptors = match (report.status, report.data) {
            (Status::Success, HostData::Zones(d)) if !d.is_empty() => d,
            (status, _) => {
                return Err(RunError::Zones(format!(
                    "the device has no zoned namespace (its zone report answered {status:?}); give it an [ftl.zoned] table"
                )));
            }
        };
        let size = descriptors.get(1).map_or(front.capacity_lbas(), |d| d.start) * lba;
        let cap = descriptors[0].capacity * lba;
        let device_max_open = dev.config().ftl.zoned_ns().map_or(0, |z| z.max_open);
        let zones = descriptors
            .iter()
            .map(|d| {
                let dead = matches!(d.state, ZoneState::ReadOnly | ZoneState::Offline);
                HostZone { wp: (d.wp - d.start) * lba, busy: false, dead }
            })
            .collect();
        Ok(ZoneBook {
            size,
            cap,
            zones: RefCell::new(zones),
            open: RefCell::new(Vec::new()),
            device_max_open,
            emulated: false,
            freed: Notify::new(&dev.sim().cx(), "zbd zone free"),
            writes: Cell::new(0),
            resets: Cell::new(0),
        })
    }

    /// Checks `jobs`' zone options against the zoned namespace `dev` configures (its zone size,
    /// its open-zone limit), before anything runs.
    pub fn check(dev: &dyn System, jobs: &[JobSpec]) -> Result<(), RunError> {
        let cfg = dev.config();
        let Some(zc) = cfg.ftl.zoned_ns() else { return Ok(()) };
        let size = zc.layout(&cfg.geometry, cfg.ftl.op).size_units * cfg.geometry.mapping_unit.bytes();
        let invalid = |j: &JobSpec, option, message| {
            RunError::Job(crate::workload::JobError::Invalid { job: j.name.clone(), option, message })
        };
        for j in jobs {
            let Some(z) = &j.zbd else { continue };
            if let Some(s) = z.zonesize
                && s != size
            {
                let msg =
                    format!("{} is not the device's zone size ({})", sim::ByteSize(s), sim::ByteSize(size));
                return Err(invalid(j, "zonesize", msg));
            }
            if zc.max_open > 0 && z.max_open_zones > zc.max_open {
                let msg =
                    format!("{} is more than the device's {} open zones", z.max_open_zones, zc.max_open);
                return Err(invalid(j, "max_open_zones", msg));
            }
        }
        Ok(())
    }

    /// Host-side zones of the jobs' `zonesize` over a conventional namespace.
    fn emulated(dev: &dyn System, jobs: &[JobSpec]) -> Result<ZoneBook, RunError> {
        let front = dev.front();
        let sizes: Vec<u64> = jobs.iter().filter_map(|j| j.zbd.as_ref()).filter_map(|z| z.zonesize).collect();
        let Some(&size) = sizes.first() else {
            return Err(RunError::Zones(
                "the device has no zoned namespace: give it an [ftl.zoned] table, or a zonesize for host-side zones over its conventional namespace".into(),
            ));
        };
        if sizes.iter().any(|&s| s != size) {
            return Err(RunError::Zones("host-side zones need one zonesize for every job".into()));
        }
        let lba = front.lba_bytes() as u64;
        let capacity = front.capacity_lbas() * lba;
        if !size.is_multiple_of(lba) || size > capacity {
            return Err(RunError::Zones(format!(
                "zonesize={} must be a whole number of {lba}-byte blocks within the device's {}",
                sim::ByteSize(size),
                sim::ByteSize(capacity)
            )));
        }
        let n = capacity / size;
        Ok(ZoneBook {
            size,
            cap: size,
            zones: RefCell::new(vec![HostZone { wp: 0, busy: false, dead: false }; n as usize]),
            open: RefCell::new(Vec::new()),
            device_max_open: 0,
            emulated: true,
            freed: Notify::new(&dev.sim().cx(), "zbd zone free"),
            writes: Cell::new(0),
            resets: Cell::new(0),
        })
    }

    fn zone_of(&self, offset: u64) -> u32 {
        (offset / self.size) as u32
    }

    /// The zones whose start lies in `region`.
    fn zones_in(&self, region: &Range<u64>) -> Range<u32> {
        let n = self.zones.borrow().len() as u32;
        (region.start.div_ceil(self.size) as u32).min(n)..(region.end.div_ceil(self.size) as u32).min(n)
    }

    /// Where a read of `len` bytes at `offset` goes: unchanged with `read_beyond_wp`, else into
    /// the written part of its zone (or of the next zone with data; unchanged if none has).
    pub fn read_at(&self, z: &ZbdOptions, offset: u64, len: u64) -> u64 {
        if z.read_beyond_wp {
            return offset;
        }
        let zones = self.zones.borrow();
        let n = zones.len() as u32;
        let first = self.zone_of(offset);
        for k in 0..n {
            let zi = (first + k) % n;
            let wp = zones[zi as usize].wp;
            if wp >= len {
                let start = zi as u64 * self.size;
                let within = if k == 0 { offset - start } else { 0 };
                return start + (within % (wp - len + 1)) / len * len;
            }
        }
        offset
    }

    /// Takes a zone for a write of `len` bytes wanted at `offset` by a job over `region`: waits
    /// until one is free, resets it first if it must, and returns where the write goes and how
    /// long it is (shortened to the zone's capacity left). The caller gives it back with
    /// [`written`](Self::written).
    pub async fn take(
        &self,
        front: &Front,
        qid: u16,
        opts: &ZbdOptions,
        region: &Range<u64>,
        offset: u64,
        len: u64,
    ) -> Option<(u32, u64, u64)> {
        let range = self.zones_in(region);
        if range.is_empty() {
            return None;
        }
        let limit = match (opts.max_open_zones, self.device_max_open) {
            (0, d) => d,
            (j, _) => j,
        };
        loop {
            let wanted = self.zone_of(offset).clamp(range.start, range.end - 1);
            let Some((z, reset)) = self.choose(wanted, &range, limit, opts) else {
                self.freed.notified().await;
                continue;
            };
            self.zones.borrow_mut()[z as usize].busy = true;
            if reset {
                let (lba, zslba) = (self.lba(front), z as u64 * self.size / self.lba(front));
                let cmd = match self.emulated {
                    true => NvmeCommand::deallocate(vec![(zslba, (self.size / lba) as u32)]),
                    false => NvmeCommand::zone_send(zslba, ZoneAction::Reset, false),
                };
                let c = front.submit(qid, cmd).await;
                if c.status == Status::Success {
                    self.zones.borrow_mut()[z as usize].wp = 0;
                    self.resets.set(self.resets.get() + 1);
                } else {
                    self.zones.borrow_mut()[z as usize].dead = true;
                    self.release(z);
                    continue;
                }
            }
            let wp = self.zones.borrow()[z as usize].wp;
            let n = len.min(self.cap - wp);
            return Some((z, z as u64 * self.size + wp, n));
        }
    }

    fn lba(&self, front: &Front) -> u64 {
        front.lba_bytes() as u64
    }

    /// The zone a write goes to and whether it must be reset first; `None` while every
    /// candidate is busy.
    fn choose(&self, wanted: u32, range: &Range<u32>, limit: u32, opts: &ZbdOptions) -> Option<(u32, bool)> {
        let zones = self.zones.borrow();
        // A write is shortened to the zone's capacity left: any zone not full takes one.
        let fits = |z: u32| !zones[z as usize].dead && zones[z as usize].wp < self.cap;
        let free = |z: u32| !zones[z as usize].busy && !zones[z as usize].dead;
        let mut open = self.open.borrow_mut();
        open.retain(|&z| fits(z));
        let room = limit == 0 || (open.len() as u32) < limit || open.contains(&wanted);
        // Periodic resets past the threshold (of the wanted zone, if it may be written).
        if let Some(t) = opts.reset_threshold {
            let held: u64 = range.clone().map(|z| zones[z as usize].wp).sum();
            let ratio = held as f64 / (range.len() as u64 * self.cap) as f64;
            let every = (1.0 / opts.reset_frequency.max(1e-9)).round().max(1.0) as u64;
            if ratio > t
                && self.writes.get().is_multiple_of(every)
                && room
                && free(wanted)
                && zones[wanted as usize].wp > 0
            {
                drop(zones);
                self.zones.borrow_mut()[wanted as usize].wp = 0;
                self.writes.set(self.writes.get() + 1);
                if !open.contains(&wanted) {
                    open.push(wanted);
                }
                return Some((wanted, true));
            }
        }
        // At the open-zone limit: the open zones, from the wanted one (or one picked by the
        // offset); below it, the zones that are not full from the wanted one on (a new one
        // opens only while there is room for it).
        let candidates: Vec<u32> = if limit > 0 && open.len() as u32 >= limit {
            let k = open.iter().position(|&z| z == wanted).unwrap_or(wanted as usize % open.len());
            open[k..].iter().chain(&open[..k]).copied().collect()
        } else {
            let n = range.len() as u32;
            (0..n)
                .map(|k| range.start + (wanted - range.start + k) % n)
                .filter(|&z| fits(z))
                .take(64)
                .collect()
        };
        if let Some(&z) = candidates.iter().find(|&&z| free(z)) {
            if !open.contains(&z) {
                open.push(z);
            }
            self.writes.set(self.writes.get() + 1);
            return Some((z, false));
        }
        if !candidates.is_empty() && limit > 0 && open.len() as u32 >= limit {
            return None; // every open zone is being written and no other may open: wait
        }
        // Every zone of the range that is not full is being written, and another may open:
        // reset the wanted zone (or the next free full one), which opens. Its write pointer is
        // the zone's start from now on, so that it stays in the open list.
        let n = range.len() as u32;
        let z = (0..n)
            .map(|k| range.start + (wanted - range.start + k) % n)
            .find(|&z| free(z) && zones[z as usize].wp >= self.cap);
        let Some(z) = z else {
            return None; // nothing to reset now: wait for a write to end
        };
        drop(zones);
        self.zones.borrow_mut()[z as usize].wp = 0;
        open.push(z);
        self.writes.set(self.writes.get() + 1);
        Some((z, true))
    }

    /// A write taken with [`take`](Self::take) ended: `bytes` more are written if it
    /// succeeded; otherwise the zone's write pointer is read again from the device.
    pub async fn written(&self, front: &Front, qid: u16, z: u32, bytes: Option<u64>) {
        match bytes {
            Some(b) => self.zones.borrow_mut()[z as usize].wp += b,
            None if self.emulated => {} // nothing to read back: the host keeps the zones
            None => {
                let lba = self.lba(front);
                let at = z as u64 * self.size / lba;
                let c = front.submit(qid, NvmeCommand::report_zones(at, ZoneFilter::All, true, 1)).await;
                if let HostData::Zones(d) = c.data
                    && let Some(d) = d.first()
                {
                    let mut zones = self.zones.borrow_mut();
                    zones[z as usize].wp = (d.wp - d.start) * lba;
                    zones[z as usize].dead = matches!(d.state, ZoneState::ReadOnly | ZoneState::Offline);
                }
            }
        }
        self.release(z);
    }

    fn release(&self, z: u32) {
        self.zones.borrow_mut()[z as usize].busy = false;
        self.freed.notify_all();
    }
}
