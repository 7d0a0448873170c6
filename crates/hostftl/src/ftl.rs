//! The host-side FTL's state: the page-level map in host memory, the block table, the
//! allocation state, the units written but not yet programmed, and the host memory all of it
//! occupies. Every request coroutine holds a [`HostFtl`] handle; state is borrowed only between
//! awaits, never across one.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use firmware::config::HostFtlConfig;
use firmware::ftl::{BlockManager, FtlConfig, FtlStats, UnitData};
use firmware::system::HostStack;
use nand::{BlockIdx, Geometry, Lpn, UnitAddr};
use raw::RawArray;
use rustc_hash::FxHashMap;
use sim::sync::Notify;
use sim::{CoreId, Cx};

use crate::alloc::Placer;

/// An unmapped entry of the map.
pub(crate) const UNMAPPED: u32 = u32::MAX;

/// A unit the host wrote that is not on flash yet (in host memory until its page programs).
pub(crate) struct Pending {
    /// The write's sequence number (recorded as the unit's first-write number on flash).
    pub born: u64,
    /// The data.
    pub data: UnitData,
}

/// The host-side FTL. Cheap to clone.
#[derive(Clone)]
pub struct HostFtl {
    pub(crate) inner: Rc<Inner>,
}

pub(crate) struct Inner {
    pub cx: Cx,
    pub raw: Rc<RawArray>,
    pub host: Rc<HostStack>,
    pub geo: Geometry,
    pub cfg: HostFtlConfig,
    /// The FTL policies of the device's `[ftl]` section (GC thresholds and victims, OP).
    pub policy: FtlConfig,
    pub logical: u32,
    pub payload: bool,
    /// LPN to unit address (`UNMAPPED` if none).
    pub l2p: RefCell<Vec<u32>>,
    pub blocks: RefCell<BlockManager>,
    pub placer: RefCell<Placer>,
    pub pending: RefCell<FxHashMap<u32, Pending>>,
    /// Host writes in order (the next unit's first-write number).
    pub seq: Cell<u64>,
    pub stats: RefCell<FtlStats>,
    /// Host reads served from host memory, and from flash.
    pub hits: Cell<(u64, u64)>,
    /// A block was erased (writes waiting for room look again).
    pub space: Notify,
    /// A program completed (FUA writes and flushes look again).
    pub programmed: Notify,
    /// A read unpinned its block (GC waiting to erase looks again).
    pub unpinned: Notify,
    /// Page programs in flight.
    pub programs: Cell<u32>,
    /// Host write commands in flight (a burst defers GC).
    pub writes: Cell<u32>,
    /// Planes with a GC task running.
    pub gc_active: RefCell<Vec<bool>>,
    /// Mapped units.
    pub mapped: Cell<u64>,
    /// Units in the host write buffer waiting for a flusher: (LPN, write sequence, target).
    pub buffered: RefCell<std::collections::VecDeque<(Lpn, u64, crate::alloc::Target)>>,
    /// Units were buffered.
    pub buffer_work: Notify,
    /// The buffer emptied.
    pub drained: Notify,
    /// Flushers sending a batch.
    pub flushing: Cell<u32>,
    /// Times GC waited for a write burst to pass.
    pub deferrals: Cell<u64>,
    /// The host core GC runs on.
    pub gc_core: CoreId,
    pub rng: RefCell<sim::SimRng>,
}

impl HostFtl {
    /// Host-visible mapping units.
    pub fn logical_units(&self) -> u32 {
        self.inner.logical
    }

    /// Counters so far (in the firmware FTL's terms).
    pub fn stats(&self) -> FtlStats {
        self.inner.stats.borrow().clone()
    }

    /// Host reads of units served from host memory and from flash: (hits, misses).
    pub fn hits(&self) -> (u64, u64) {
        self.inner.hits.get()
    }

    /// Units written and not yet on flash.
    pub fn pending_units(&self) -> u64 {
        self.inner.pending.borrow().len() as u64
    }

    /// Mapped units.
    pub fn mapped_units(&self) -> u64 {
        self.inner.mapped.get()
    }

    /// Free blocks in every plane.
    pub fn free_blocks(&self) -> u64 {
        self.inner.blocks.borrow().total_free()
    }

    /// The raw array underneath.
    pub fn raw(&self) -> &Rc<RawArray> {
        &self.inner.raw
    }

    /// Logical channel groups of the array.
    pub fn groups(&self) -> u32 {
        self.inner.cfg.groups
    }
}

impl Inner {
    /// Where `lpn` lives on flash.
    pub fn lookup(&self, lpn: Lpn) -> Option<UnitAddr> {
        let v = self.l2p.borrow()[lpn.0 as usize];
        (v != UNMAPPED).then_some(UnitAddr(v))
    }

    /// What identifies the current data of `lpn`: its pending write, else where it is mapped.
    pub fn unit_version(&self, lpn: Lpn) -> (Option<u64>, Option<UnitAddr>) {
        (self.pending.borrow().get(&lpn.0).map(|p| p.born), self.lookup(lpn))
    }

    /// Points `lpn` at `to` (or nowhere) and returns where it was.
    pub fn remap(&self, lpn: Lpn, to: Option<UnitAddr>) -> Option<UnitAddr> {
        let old = std::mem::replace(&mut self.l2p.borrow_mut()[lpn.0 as usize], to.map_or(UNMAPPED, |u| u.0));
        let old = (old != UNMAPPED).then_some(UnitAddr(old));
        match (old.is_some(), to.is_some()) {
            (false, true) => self.mapped.set(self.mapped.get() + 1),
            (true, false) => self.mapped.set(self.mapped.get() - 1),
            _ => {}
        }
        old
    }

    /// Marks a unit's copy stale.
    pub fn invalidate(&self, unit: UnitAddr) {
        self.raw.fil().array().borrow_mut().invalidate(unit);
    }

    /// The next write sequence number.
    pub fn next_seq(&self) -> u64 {
        let s = self.seq.get();
        self.seq.set(s + 1);
        s
    }

    /// The plane of `block`.
    pub fn plane_of(&self, block: BlockIdx) -> u32 {
        self.blocks.borrow().plane_of(block)
    }

    /// Brings the host memory accounts up to date: the map (whole, or its mapped entries) and
    /// the data held until it is on flash.
    pub fn account(&self) {
        let m = &self.cfg.memory;
        let entries = if m.preallocate { self.logical as u64 } else { self.mapped.get() };
        self.host.set_memory("mapping table", entries * m.entry_bytes as u64);
        self.host.set_memory(
            "data not yet on flash",
            self.pending.borrow().len() as u64 * self.geo.unit_bytes() as u64,
        );
    }

    /// Runs `cycles` of FTL work on the calling thread's host core.
    pub async fn cpu(&self, cycles: u64) {
        self.host.cpu(cycles, 0).await;
    }
}

/// The raw command that finished its flash work last among a host command's: its slot wait,
/// flash time and what followed are the host command's critical path.
#[derive(Default)]
pub(crate) struct Critical {
    last: Option<raw::RawCompletion>,
}

impl Critical {
    /// Takes `c` if it finished its flash work later than the ones seen.
    pub fn see(&mut self, c: raw::RawCompletion) {
        if self.last.as_ref().is_none_or(|l| c.flash_done >= l.flash_done) {
            self.last = Some(c);
        }
    }

    /// Adds the critical path up to `now` to `ph`: slot wait (`fil_wait`), flash work
    /// (`command`), data and completion back to the host (`dma`).
    pub fn add_to(&self, ph: &mut firmware::trace::Phases, now: sim::SimTime) {
        if let Some(c) = &self.last {
            ph.fil_wait += c.slot.saturating_since(c.submitted);
            ph.command += c.flash_done.saturating_since(c.slot);
            ph.dma += now.saturating_since(c.flash_done);
        }
    }
}
