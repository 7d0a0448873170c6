//! The zoned FTL: a Zoned Namespace's data path, a part of the FTL beside the conventional
//! write path (the data cache, write-back and GC are not used by a zoned namespace).
//!
//! ```text
//!   zone write ─▶ units into the zone's page buffer ─▶ a full page: a job in the zone queue
//!                 (readable from the buffer)              │ one writer task, in order:
//!                                                         │ the zone's next page (its planes in
//!                                                         │ turn, a block taken per plane as
//!                                                         ▼ needed), program, map the units
//!   reset ─▶ wait for the zone's jobs ─▶ unmap its units ─▶ erase every block it holds
//!   finish ─▶ pad the rest of the capacity ─▶ wait      flush / FUA ─▶ pad open pages ─▶ wait
//! ```
//!
//! Mapping stays per unit (the full map in DRAM), so a page a flush padded is simply followed
//! by the next one: the zone's pages need not be where a static layout would put them, and a
//! write pointer is recovered after a crash as the longest prefix of the zone's mapped units.
//! Host writes are the only data programmed besides padding: there is no garbage collection,
//! and the device WAF is 1.0 unless flushes or finishes pad pages.

mod config;
mod io;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use nand::{BlockIdx, Lpn};
use sim::Cx;
use sim::sync::{Notify, Ring, RingSpec};

use crate::ftl::data::UnitData;

pub use config::{ZoneLayout, ZonedConfig};

/// A page's worth (or less) of a zone's units on its way to flash.
pub(crate) struct Job {
    zone: u32,
    units: Vec<(Lpn, UnitData)>,
}

/// A zone's flash: the blocks it holds, its open block in each of its planes, the units
/// waiting for a page.
#[derive(Default)]
struct ZoneFlash {
    /// Pages handed out (the next page goes to plane `pages % planes`).
    pages: u64,
    /// The open block in each of the zone's planes and its next page.
    open: Vec<Option<(BlockIdx, u32)>>,
    /// Every block holding the zone's data (erased on reset).
    held: Vec<BlockIdx>,
    /// Units written but not yet in a job (fewer than a page).
    partial: Vec<(Lpn, UnitData)>,
    /// Jobs queued or programming.
    inflight: u32,
}

/// What the zones cost: the report's zone section.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ZoneStats {
    /// Zone resets that erased something.
    pub resets: u64,
    /// Blocks those resets erased.
    pub reset_erases: u64,
    /// Virtual time resets took, summed, ns (waiting for the zone's programs, then erasing).
    pub reset_ns: u64,
    /// Units written but still in a page buffer when their zone was reset (never programmed).
    pub reset_dropped_units: u64,
    /// Zones finished before their capacity was written.
    pub finishes: u64,
    /// Units finishes padded.
    pub finish_pad_units: u64,
    /// Pages flushes and FUA writes programmed less than full (each wastes the rest of a page).
    pub flush_pad_pages: u64,
    /// Pages that found no free block in their plane (their data stays in DRAM, not durable).
    pub stuck_pages: u64,
    /// Units a recovery dropped beyond a zone's first unwritten unit (programmed after a page
    /// that did not reach flash before the crash).
    pub recovered_dropped_units: u64,
}

/// A zoned namespace in the report: its zones, their states now, and what they cost.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ZoneReport {
    /// Zones.
    pub zones: u32,
    /// Zone size, bytes.
    pub zone_size: u64,
    /// Zone capacity, bytes.
    pub zone_capacity: u64,
    /// Zones by state now: empty, implicitly opened, explicitly opened, closed, read-only,
    /// full, offline.
    pub by_state: [u64; 7],
    /// Resets, finishes, padding.
    pub stats: ZoneStats,
}

/// The zoned FTL's state (in `FtlInner::zoned`).
pub(crate) struct Zoned {
    pub layout: ZoneLayout,
    pub cfg: ZonedConfig,
    /// Each die set's planes, in page order.
    planes: Vec<Vec<u32>>,
    flash: RefCell<Vec<ZoneFlash>>,
    /// Units in a page buffer or being programmed: reads are served from here.
    pending: RefCell<HashMap<Lpn, UnitData>>,
    /// Jobs in page order, for the writer task.
    queue: Ring<Job>,
    /// Jobs queued or programming, over all zones.
    inflight: Cell<u32>,
    /// Zones being reset (their commands wait).
    resetting: RefCell<Vec<bool>>,
    /// A job settled.
    settled: Notify,
    pub stats: RefCell<ZoneStats>,
}

impl Zoned {
    pub fn new(cx: &Cx, cfg: &ZonedConfig, geo: &nand::Geometry, op: f64) -> Zoned {
        let layout = cfg.layout(geo, op);
        let planes: Vec<Vec<u32>> = (0..layout.sets).map(|s| layout.planes(geo, s)).collect();
        let flash = (0..layout.zones)
            .map(|z| ZoneFlash {
                open: vec![None; planes[(z % layout.sets) as usize].len()],
                ..ZoneFlash::default()
            })
            .collect();
        let capacity = layout.buffer_pages as usize + 1;
        Zoned {
            queue: Ring::new(cx, "zone pages", RingSpec { capacity, ..RingSpec::default() }),
            resetting: RefCell::new(vec![false; layout.zones as usize]),
            layout,
            cfg: cfg.clone(),
            planes,
            flash: RefCell::new(flash),
            pending: RefCell::new(HashMap::new()),
            inflight: Cell::new(0),
            settled: Notify::new(cx, "zone page settled"),
            stats: RefCell::new(ZoneStats::default()),
        }
    }

    /// Zone `z`'s first unit.
    pub fn first_unit(&self, z: u32) -> u32 {
        (z as u64 * self.layout.size_units) as u32
    }
}
