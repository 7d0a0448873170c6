//! NVMe Flexible Data Placement (FDP; TP4146, NVMe Base Specification 2.1, section 5.2.4 "Flexible
//! Data Placement"): the configuration (`[ftl.fdp]`), how a placement identifier names a reclaim
//! group and a reclaim unit handle, and the FDP state the FTL keeps (per-handle counters,
//! reclaim units being filled, the event log).
//!
//! In this FTL:
//!
//! - a **reclaim group** (RG) is a set of whole dies: the array's dies in flat order, split into
//!   `reclaim_groups` equal runs;
//! - a **reclaim unit handle** (RUH) is a set of write frontiers: one open block per plane for
//!   host data written back under that handle (and, persistently isolated, one for the data GC
//!   moves out of its blocks);
//! - a **reclaim unit** (RU) is `ru_blocks` blocks in every plane of a group, filled by one
//!   handle's host data; the handle's RU is counted in pages, and when its pages are all handed
//!   out the handle moves to a fresh RU (its next blocks). A Reclaim Unit Handle Update moves it
//!   at once: the handle's open blocks in the group are closed where they stand (their unwritten
//!   pages are lost until GC erases the block) and an "RU not fully written" event is logged.
//!
//! GC still collects blocks, not whole reclaim units (the spec lets a controller erase less than
//! an RU; docs/fdp.md says what this changes).
//!
//! **Placement identifier encoding** (the spec's DSPEC under RGIF): with `G` reclaim groups the
//! Reclaim Group Identifier Format is `RGIF = ceil(log2(G))` bits (0 with one group), the most
//! significant RGIF bits of the 16-bit placement identifier name the group and the rest the
//! placement handle: `pid = (rg << (16 - RGIF)) | ph`. Placement handle `i` references reclaim
//! unit handle `i`. A write without a placement identifier uses placement handle 0 in whichever
//! group the allocator picks.

use nand::Geometry;
use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};

use crate::ftl::alloc::Lane;
use crate::ftl::blocks::Stream;
use crate::ftl::state::{Ftl, FtlInner};

/// Most reclaim unit handles a configuration may have (a cache line keeps its handle in 8 bits).
pub const MAX_HANDLES: u16 = 256;

/// Events the FDP Events log keeps (the oldest are dropped beyond this).
pub const MAX_EVENTS: usize = 256;

/// How data GC moves is placed (the RUH's Reclaim Unit Handle Type).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// Initially isolated (RUHT 1h): host data of different handles goes to different reclaim
    /// units, but GC moves every handle's surviving data into one shared GC frontier per plane.
    #[default]
    Initially,
    /// Persistently isolated (RUHT 2h): GC moves a victim's data into a GC frontier of the
    /// victim's own handle, so data of different handles never share a block.
    Persistently,
}

/// `[ftl.fdp]`: Flexible Data Placement. Absent: writes are placed as without FDP and placement
/// identifiers are ignored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FdpConfig {
    /// Reclaim unit handles (and placement handles, one each), 1 to 256. Default: 8.
    #[serde(default = "default_handles")]
    pub handles: u16,
    /// Reclaim groups: the array's dies split into this many equal runs (it must divide the
    /// dies). Default: 1.
    #[serde(default = "one")]
    pub reclaim_groups: u32,
    /// Whether GC keeps handles apart. Default: initially.
    #[serde(default)]
    pub isolation: Isolation,
    /// Blocks per plane of a reclaim unit (an RU spans every plane of its group). Default: 1.
    #[serde(default = "one")]
    pub ru_blocks: u32,
}

fn default_handles() -> u16 {
    8
}
fn one() -> u32 {
    1
}

impl Default for FdpConfig {
    fn default() -> Self {
        FdpConfig { handles: 8, reclaim_groups: 1, isolation: Isolation::Initially, ru_blocks: 1 }
    }
}

/// Where one unit of host data goes: under FDP a reclaim unit handle and the reclaim group the
/// placement identifier named (`None`: any), and the NVM set of the queue the write came
/// through (0: the whole array; see `sets`). Three bytes (a cache line keeps one in its
/// padding). Ordered by set, then group, then handle.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Placed {
    set: u8,
    /// The group plus one (0: any group).
    group: u8,
    handle: u8,
}

impl Placed {
    /// Handle 0, any group, the whole array: writes without a placement identifier, and every
    /// write without FDP or NVM sets.
    pub const DEFAULT: Placed = Placed { set: 0, group: 0, handle: 0 };

    /// Handle `handle` (below 256) in group `group` (below 255), or in any group.
    pub fn new(handle: u16, group: Option<u32>) -> Placed {
        let group = group.map_or(0, |g| g as u8 + 1);
        Placed { set: 0, group, handle: handle as u8 }
    }

    /// The same placement confined to NVM set `set` (0: the whole array).
    pub fn in_set(self, set: u8) -> Placed {
        Placed { set, ..self }
    }

    /// The reclaim unit handle.
    pub fn handle(self) -> u16 {
        self.handle as u16
    }

    /// The reclaim group, if the placement identifier named one.
    pub fn group(self) -> Option<u32> {
        self.group.checked_sub(1).map(u32::from)
    }

    /// The NVM set (0: the whole array).
    pub fn set(self) -> u8 {
        self.set
    }
}

impl FdpConfig {
    /// Bits of a placement identifier that name the reclaim group (the spec's RGIF).
    pub fn rgif(&self) -> u32 {
        if self.reclaim_groups <= 1 { 0 } else { 32 - (self.reclaim_groups - 1).leading_zeros() }
    }

    /// The placement identifier of handle `handle` in group `group`.
    pub fn pid(&self, group: u32, handle: u16) -> u16 {
        let rgif = self.rgif();
        if rgif == 0 { handle } else { ((group << (16 - rgif)) as u16) | handle }
    }

    /// The (reclaim group, handle) a placement identifier names, or `None` if it names a group
    /// or handle that does not exist.
    pub fn decode(&self, pid: u16) -> Option<(u32, u16)> {
        let rgif = self.rgif();
        let (group, handle) = match rgif {
            0 => (0, pid),
            _ => ((pid >> (16 - rgif)) as u32, pid & (u16::MAX >> rgif)),
        };
        (group < self.reclaim_groups && handle < self.handles).then_some((group, handle))
    }

    /// Where a write with placement identifier `pid` (or none) goes; `None` for an invalid one.
    pub fn place(&self, pid: Option<u16>) -> Option<Placed> {
        match pid {
            None => Some(Placed::DEFAULT),
            Some(p) => self.decode(p).map(|(g, h)| Placed::new(h, (self.reclaim_groups > 1).then_some(g))),
        }
    }

    /// Planes of one reclaim group on `geo` (its dies' planes).
    pub fn planes_per_group(&self, geo: &Geometry) -> u32 {
        geo.total_dies() / self.reclaim_groups * geo.planes
    }

    /// The reclaim group of global plane `plane` (planes are numbered die by die).
    pub fn group_of_plane(&self, geo: &Geometry, plane: u32) -> u32 {
        plane / self.planes_per_group(geo)
    }

    /// Pages of one reclaim unit on `geo`.
    pub fn ru_pages(&self, geo: &Geometry) -> u64 {
        self.ru_blocks as u64 * self.planes_per_group(geo) as u64 * geo.pages as u64
    }

    /// Write frontiers per plane beyond the three streams' own (handle 0 uses those): one per
    /// extra handle for host data, and as many again for GC when persistently isolated.
    pub fn extra_frontiers(&self) -> u32 {
        let extra = self.handles as u32 - 1;
        if self.isolation == Isolation::Persistently { 2 * extra } else { extra }
    }

    /// Checks the section against the geometry, given the spare blocks a plane keeps beyond its
    /// data (`spare`) and the free blocks GC needs (`need`); the error names the field.
    pub fn validate(&self, geo: &Geometry, spare: f64, need: u32) -> Result<(), ConfigError> {
        ensure(self.handles >= 1 && self.handles <= MAX_HANDLES, "fdp.handles", || {
            format!("must be from 1 to {MAX_HANDLES} (got {})", self.handles)
        })?;
        let dies = geo.total_dies();
        ensure(
            self.reclaim_groups >= 1
                && self.reclaim_groups <= dies.min(255)
                && dies.is_multiple_of(self.reclaim_groups),
            "fdp.reclaim_groups",
            || format!("must divide the {dies} dies of the array (got {})", self.reclaim_groups),
        )?;
        let rgif = self.rgif();
        ensure((self.handles as u32) <= 1 << (16 - rgif), "fdp.handles", || {
            format!(
                "{} handles do not fit the {} bits a placement identifier leaves beside {rgif} group bits",
                self.handles,
                16 - rgif
            )
        })?;
        ensure(self.ru_blocks >= 1 && self.ru_blocks <= geo.blocks, "fdp.ru_blocks", || {
            format!("must be from 1 to the {} blocks of a plane (got {})", geo.blocks, self.ru_blocks)
        })?;
        let open = self.extra_frontiers();
        ensure(spare >= (need + open) as f64, "fdp.handles", || {
            format!(
                "each plane keeps {spare:.1} spare blocks but GC needs {need} and the handles' write frontiers {open} more; raise ftl.op or lower fdp.handles"
            )
        })?;
        Ok(())
    }
}

/// What FDP counts for one reclaim unit handle.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandleStats {
    /// Mapping units the host wrote under this handle (into the cache).
    pub host_units: u64,
    /// Its units programmed by cache write-back.
    pub user_units: u64,
    /// Its units moved by GC: out of its own blocks, and out of shared GC blocks (initial
    /// isolation) those whose logical unit was last written back under it.
    pub gc_units: u64,
    /// Host writes that named it with a placement identifier (0 for handle 0 used by default).
    pub host_specified: u64,
    /// Reclaim units it filled or was moved off (by an update).
    pub reclaim_units: u64,
}

/// An FDP event (the FDP Events log page, 23h).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FdpEvent {
    /// Event Type: host events 0h RU Not Fully Written and 3h Invalid Placement Identifier;
    /// controller event 80h Media Reallocated.
    pub kind: u8,
    /// When it happened, ns of virtual time.
    pub at_ns: u64,
    /// The placement identifier concerned.
    pub pid: u16,
    /// The reclaim group (not for Invalid Placement Identifier).
    pub group: u32,
    /// The reclaim unit handle (not for Invalid Placement Identifier).
    pub handle: u16,
    /// Mapping units: those the reclaim unit could still have taken (RU Not Fully Written:
    /// its RUAMW), or those moved to other media (Media Reallocated).
    pub units: u64,
}

impl FdpEvent {
    /// Whether the host caused it (the FDP Events log's host events), not the controller.
    pub fn is_host_event(&self) -> bool {
        self.kind < 0x80
    }
}

/// FDP event type: a reclaim unit handle moved to a new reclaim unit before the old one was full.
pub const EVENT_RU_NOT_FULLY_WRITTEN: u8 = 0x0;
/// FDP event type: a write named a placement identifier that does not exist.
pub const EVENT_INVALID_PID: u8 = 0x3;
/// FDP event type: the controller moved valid data out of a block whose program failed.
pub const EVENT_MEDIA_REALLOCATED: u8 = 0x80;

/// FDP counters over a run (`FtlStats::fdp`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FdpStats {
    /// Per reclaim unit handle.
    pub handles: Vec<HandleStats>,
    /// Reclaim Unit Handle Updates the host asked for.
    pub ruh_updates: u64,
    /// Writes refused for an invalid placement identifier.
    pub invalid_pids: u64,
    /// Events not kept because the log was full (the oldest go first).
    pub events_dropped: u64,
}

impl FdpStats {
    /// Adds `b`'s counters to these (several FTLs side by side).
    pub fn merge(&mut self, b: &FdpStats) {
        if self.handles.len() < b.handles.len() {
            self.handles.resize(b.handles.len(), HandleStats::default());
        }
        for (a, b) in self.handles.iter_mut().zip(&b.handles) {
            a.host_units += b.host_units;
            a.user_units += b.user_units;
            a.gc_units += b.gc_units;
            a.host_specified += b.host_specified;
            a.reclaim_units += b.reclaim_units;
        }
        self.ruh_updates += b.ruh_updates;
        self.invalid_pids += b.invalid_pids;
        self.events_dropped += b.events_dropped;
    }
}

/// The FDP state an FTL keeps.
pub(crate) struct Fdp {
    pub cfg: FdpConfig,
    /// Per logical unit: the handle its flash copy was written back under (GC's attribution).
    pub lpn_handle: Vec<u8>,
    /// Per handle, per group: pages of the current reclaim unit handed out to host data.
    pub ru_used: Vec<Vec<u64>>,
    /// Pages of a reclaim unit.
    pub ru_pages: u64,
    /// The event log, oldest first.
    pub events: std::collections::VecDeque<FdpEvent>,
}

impl Fdp {
    /// The state for `cfg` over `logical` units of `geo`.
    pub fn new(cfg: &FdpConfig, geo: &Geometry, logical: u32) -> Fdp {
        Fdp {
            cfg: cfg.clone(),
            lpn_handle: vec![0; logical as usize],
            ru_used: vec![vec![0; cfg.reclaim_groups as usize]; cfg.handles as usize],
            ru_pages: cfg.ru_pages(geo),
            events: Default::default(),
        }
    }

    /// Logs `e`, dropping the oldest event if the log is full (counted in `stats`).
    pub fn log(&mut self, e: FdpEvent, stats: &mut FdpStats) {
        if self.events.len() == MAX_EVENTS {
            self.events.pop_front();
            stats.events_dropped += 1;
        }
        self.events.push_back(e);
    }
}

/// One reclaim unit handle's state in one reclaim group (I/O Management Receive, Reclaim Unit
/// Handle Status).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuhState {
    /// The placement identifier that names it.
    pub pid: u16,
    /// The reclaim unit handle.
    pub handle: u16,
    /// The reclaim group.
    pub group: u32,
    /// Mapping units its current reclaim unit can still take (Reclaim Unit Available Media
    /// Writes, before the HIL turns it into logical blocks).
    pub ruamw_units: u64,
}

impl FtlInner {
    /// Where a host write with placement identifier `pid` (or none) goes, counted for its
    /// handle; the default without FDP (the HIL refused invalid identifiers already).
    pub(crate) fn host_placed(&self, pid: Option<u16>) -> Placed {
        let Some(f) = &self.fdp else { return Placed::DEFAULT };
        let place = f.borrow().cfg.place(pid).unwrap_or(Placed::DEFAULT);
        let mut st = self.stats.borrow_mut();
        let h = &mut st.fdp.as_mut().expect("FDP counts")[place.handle()];
        h.host_units += 1;
        h.host_specified += pid.is_some() as u64;
        place
    }

    /// A page of host data went to `handle`'s frontier in `plane`: it counts towards the
    /// handle's reclaim unit in the plane's group, which is full after `ru_pages` of them (the
    /// handle moves on to a fresh one).
    pub(crate) fn fdp_page_used(&self, handle: u16, plane: u32) {
        let mut f = self.fdp.as_ref().expect("FDP on").borrow_mut();
        let g = f.cfg.group_of_plane(&self.geo, plane) as usize;
        let ru_pages = f.ru_pages;
        let used = &mut f.ru_used[handle as usize][g];
        *used += 1;
        if *used == ru_pages {
            *used = 0;
            self.stats.borrow_mut().fdp.as_mut().expect("FDP counts")[handle].reclaim_units += 1;
        }
    }

    /// `units` were programmed as one page of `place`'s handle: their flash copies are that
    /// handle's data (for GC's attribution).
    pub(crate) fn fdp_written_back(&self, place: Placed, units: &[(nand::Lpn, crate::ftl::UnitData)]) {
        let h = place.handle();
        let mut f = self.fdp.as_ref().expect("FDP on").borrow_mut();
        for (lpn, _) in units {
            f.lpn_handle[lpn.0 as usize] = h as u8;
        }
        self.stats.borrow_mut().fdp.as_mut().expect("FDP counts")[h].user_units += units.len() as u64;
    }

    /// GC moved `units` valid units out of `victim`, whose program had failed: a Media
    /// Reallocated event for the block's handle.
    pub(crate) fn fdp_reallocated(&self, victim: nand::BlockIdx, units: u64) {
        let Some(f) = &self.fdp else { return };
        let mut f = f.borrow_mut();
        let handle = self.blocks.borrow().info(victim).handle;
        let group = f.cfg.group_of_plane(&self.geo, self.blocks.borrow().plane_of(victim));
        let e = FdpEvent {
            kind: EVENT_MEDIA_REALLOCATED,
            at_ns: self.cx.now().as_nanos(),
            pid: f.cfg.pid(group, handle),
            group,
            handle,
            units,
        };
        let mut st = self.stats.borrow_mut();
        f.log(e, st.fdp.as_mut().expect("FDP counts"));
    }

    /// GC moved units of these handles' data.
    pub(crate) fn fdp_gc_moved(&self, handles: impl Iterator<Item = u16>) {
        let mut st = self.stats.borrow_mut();
        let fdp = st.fdp.as_mut().expect("FDP on");
        for h in handles {
            fdp[h].gc_units += 1;
        }
    }

    /// The handle whose data `victim` holds, if it holds one handle's only: a block of host
    /// data, or of GC's under persistent isolation (`None` without FDP, and for a shared GC
    /// block).
    pub(crate) fn fdp_owner(&self, victim: nand::BlockIdx) -> Option<u16> {
        let f = self.fdp.as_ref()?.borrow();
        let i = *self.blocks.borrow().info(victim);
        match i.stream {
            Stream::User => Some(i.handle),
            Stream::Gc if f.cfg.isolation == Isolation::Persistently => Some(i.handle),
            _ => None,
        }
    }

    /// The handle `lpn`'s flash copy was last written back under (0 without FDP).
    pub(crate) fn fdp_handle_of(&self, lpn: nand::Lpn) -> u16 {
        self.fdp.as_ref().map_or(0, |f| f.borrow().lpn_handle[lpn.0 as usize] as u16)
    }

    /// Up to `want` of cache partition `part`'s dirty lines for one background write-back under
    /// FDP or NVM sets: among its oldest dirty lines (four write-backs' worth), the whole pages' worth of each placement, oldest
    /// placement first; if no placement has a page's worth, the oldest placement's lines (a
    /// partly filled page: a handle that stops writing still reaches flash).
    pub(crate) fn fdp_batch(&self, part: usize, want: usize) -> Vec<u32> {
        let upp = self.geo.units_per_page() as usize;
        let cache = self.cache.borrow();
        let mut groups: Vec<(Placed, Vec<u32>)> = Vec::new();
        for i in cache.dirty_lru(part).take(4 * want) {
            let p = cache.line(i).place;
            match groups.iter_mut().find(|g| g.0 == p) {
                Some(g) => g.1.push(i),
                None => groups.push((p, vec![i])),
            }
        }
        let mut batch = Vec::with_capacity(want);
        for (_, lines) in &groups {
            let room = (want - batch.len()) / upp * upp;
            batch.extend(lines.iter().take((lines.len() / upp * upp).min(room)));
        }
        if batch.is_empty()
            && let Some((_, lines)) = groups.first()
        {
            batch.extend(lines.iter().take(want));
        }
        batch
    }
}

impl Ftl {
    /// The FDP configuration, if FDP is on.
    pub fn fdp(&self) -> Option<&FdpConfig> {
        self.inner.cfg.fdp.as_ref()
    }

    /// Whether a write may carry placement identifier `pid`: FDP is off (the identifier is
    /// ignored) or it names a configured group and handle.
    pub fn pid_valid(&self, pid: u16) -> bool {
        self.fdp().is_none_or(|f| f.decode(pid).is_some())
    }

    /// A write named placement identifier `pid`, which does not exist: counted, and logged as
    /// an Invalid Placement Identifier event.
    pub fn invalid_pid(&self, pid: u16) {
        let Some(f) = &self.inner.fdp else { return };
        let mut st = self.inner.stats.borrow_mut();
        let stats = st.fdp.as_mut().expect("FDP counts");
        stats.invalid_pids += 1;
        let e = FdpEvent {
            kind: EVENT_INVALID_PID,
            at_ns: self.inner.cx.now().as_nanos(),
            pid,
            group: 0,
            handle: 0,
            units: 0,
        };
        f.borrow_mut().log(e, stats);
    }

    /// Every reclaim unit handle in every reclaim group, with what its reclaim unit can still
    /// take (empty without FDP).
    pub fn ruh_states(&self) -> Vec<RuhState> {
        let Some(f) = &self.inner.fdp else { return Vec::new() };
        let f = f.borrow();
        let upp = self.inner.geo.units_per_page() as u64;
        let mut out = Vec::new();
        for group in 0..f.cfg.reclaim_groups {
            for handle in 0..f.cfg.handles {
                let used = f.ru_used[handle as usize][group as usize];
                let ruamw_units = (f.ru_pages - used) * upp;
                out.push(RuhState { pid: f.cfg.pid(group, handle), handle, group, ruamw_units });
            }
        }
        out
    }

    /// Reclaim Unit Handle Update: each placement identifier's handle moves to a fresh reclaim
    /// unit in its group (its open blocks there are closed where they stand); a reclaim unit
    /// left partly written logs an RU Not Fully Written event. Returns the first identifier
    /// that does not exist, changing nothing, or `Err(None)` without FDP.
    pub fn ruh_update(&self, pids: &[u16]) -> Result<(), Option<u16>> {
        let i = &*self.inner;
        let Some(fdp) = &i.fdp else { return Err(None) };
        let cfg = fdp.borrow().cfg.clone();
        let targets: Vec<(u32, u16)> =
            pids.iter().map(|&p| cfg.decode(p).ok_or(Some(p))).collect::<Result<_, _>>()?;
        let per_group = cfg.planes_per_group(&i.geo);
        let upp = i.geo.units_per_page() as u64;
        for (&pid, (group, handle)) in pids.iter().zip(targets) {
            {
                let (mut alloc, mut blocks) = (i.alloc.borrow_mut(), i.blocks.borrow_mut());
                let lane = Lane { stream: Stream::User, handle };
                for plane in group * per_group..(group + 1) * per_group {
                    alloc.close_open(lane, plane, &mut blocks);
                }
            }
            let mut f = fdp.borrow_mut();
            let used = std::mem::take(&mut f.ru_used[handle as usize][group as usize]);
            let mut st = i.stats.borrow_mut();
            let stats = st.fdp.as_mut().expect("FDP counts");
            stats.ruh_updates += 1;
            if used > 0 {
                stats[handle].reclaim_units += 1;
                let e = FdpEvent {
                    kind: EVENT_RU_NOT_FULLY_WRITTEN,
                    at_ns: i.cx.now().as_nanos(),
                    pid,
                    group,
                    handle,
                    units: (f.ru_pages - used) * upp,
                };
                f.log(e, stats);
            }
        }
        Ok(())
    }

    /// The FDP event log, host and controller events together, oldest first (empty without
    /// FDP).
    pub fn fdp_events(&self) -> Vec<FdpEvent> {
        self.inner.fdp.as_ref().map(|f| f.borrow().events.iter().cloned().collect()).unwrap_or_default()
    }
}

impl std::ops::Index<u16> for FdpStats {
    type Output = HandleStats;
    fn index(&self, h: u16) -> &HandleStats {
        &self.handles[h as usize]
    }
}

impl std::ops::IndexMut<u16> for FdpStats {
    fn index_mut(&mut self, h: u16) -> &mut HandleStats {
        &mut self.handles[h as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::ByteSize;

    fn geo(dies: u32) -> Geometry {
        Geometry {
            channels: 1,
            ways: dies,
            dies: 1,
            planes: 2,
            blocks: 64,
            pages: 32,
            page_size: ByteSize::kib(16),
            oob_size: ByteSize(0),
            mapping_unit: ByteSize::kib(4),
        }
    }

    #[test]
    fn placement_identifiers_split_as_rgif_says() {
        let one = FdpConfig { handles: 8, ..FdpConfig::default() };
        assert_eq!(one.rgif(), 0);
        assert_eq!(one.decode(7), Some((0, 7)));
        assert_eq!(one.decode(8), None, "beyond the handles");
        assert_eq!(one.place(Some(3)), Some(Placed::new(3, None)));
        assert_eq!(one.place(None), Some(Placed::DEFAULT));
        let four = FdpConfig { handles: 4, reclaim_groups: 4, ..FdpConfig::default() };
        assert_eq!(four.rgif(), 2);
        let pid = four.pid(3, 2);
        assert_eq!(pid, 0xC002);
        assert_eq!(four.decode(pid), Some((3, 2)));
        assert_eq!(four.place(Some(pid)).map(|p| (p.group(), p.handle())), Some((Some(3), 2)));
        assert_eq!(four.decode(0x0004), None, "handle 4 of 4");
        let three = FdpConfig { reclaim_groups: 3, ..FdpConfig::default() };
        assert_eq!(three.rgif(), 2);
        assert_eq!(three.decode(0xC000), None, "group 3 of 3");
    }

    #[test]
    fn groups_are_runs_of_dies_and_reclaim_units_span_their_planes() {
        let g = geo(4);
        let c = FdpConfig { reclaim_groups: 2, ru_blocks: 2, ..FdpConfig::default() };
        assert_eq!(c.planes_per_group(&g), 4);
        assert_eq!((0..8).map(|p| c.group_of_plane(&g, p)).collect::<Vec<_>>(), [0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(c.ru_pages(&g), 2 * 4 * 32);
    }

    #[test]
    fn validation_names_the_field() {
        let g = geo(4);
        let bad = |c: FdpConfig| c.validate(&g, 10.0, 4).unwrap_err().to_string();
        assert!(bad(FdpConfig { handles: 0, ..FdpConfig::default() }).contains("fdp.handles"));
        assert!(bad(FdpConfig { reclaim_groups: 3, ..FdpConfig::default() }).contains("fdp.reclaim_groups"));
        assert!(bad(FdpConfig { ru_blocks: 0, ..FdpConfig::default() }).contains("fdp.ru_blocks"));
        let many = bad(FdpConfig { handles: 8, isolation: Isolation::Persistently, ..FdpConfig::default() });
        assert!(many.contains("fdp.handles") && many.contains("spare"), "{many}");
        assert!(FdpConfig { handles: 4, ..FdpConfig::default() }.validate(&g, 10.0, 4).is_ok());
    }
}
