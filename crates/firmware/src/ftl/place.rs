//! Placement: which plane the next page of host data goes to, and the order translation pages
//! take. A policy is a type implementing [`Placement`]; the configuration's
//! [`AllocConfig`] names the built-in ones: a static order striping over channels, ways, dies
//! and planes (CWDP and its permutations), the least busy die, or the plane with the most
//! free blocks.

use nand::{DieIdx, Geometry, Ppa};

use crate::ftl::blocks::BlockManager;
use crate::ftl::config::{AllocConfig, Dim};

/// Chooses the plane of each new page of host data.
///
/// The allocator calls [`user_plane`](Self::user_plane) for every page of host data it hands
/// out (and, while a write waits for GC, again at every wake-up), with `room` saying which
/// planes can take a page now; [`turn`](Self::turn) orders translation pages. The implementer
/// must return only a plane `room` accepts (`None` when it accepts none), must not assume a
/// plane chosen is then used (the caller may find it full), and decides from its arguments and
/// its own counters alone. A policy whose choice depends on what it chose before keeps that in
/// one number, its [`cursor`](Self::cursor), which snapshots save and restore (so that a device
/// started from a snapshot places its next page where the saved one would have).
pub trait Placement {
    /// The plane for the next page of host data, among those `room` accepts. `blocks` gives
    /// each plane's free blocks; `die_load` each die's transactions queued or running.
    fn user_plane(
        &mut self,
        room: &dyn Fn(u32) -> bool,
        blocks: &BlockManager,
        die_load: &dyn Fn(DieIdx) -> u32,
    ) -> Option<u32>;

    /// The `i`-th plane in turn for translation pages (all planes, each once per period).
    fn turn(&self, i: u64) -> u32;

    /// The policy's state: what it remembers of its past choices. Default: none (0).
    fn cursor(&self) -> u64 {
        0
    }

    /// Restores a state [`cursor`](Self::cursor) returned (by a policy of the same kind on the
    /// same geometry). Default: nothing to restore.
    fn set_cursor(&mut self, _cursor: u64) {}
}

/// The built-in placement `cfg` (validated) names on `geo`.
pub fn placement(geo: &Geometry, cfg: &AllocConfig) -> Box<dyn Placement> {
    let planes = geo.total_dies() * geo.planes;
    match cfg.order() {
        Some(order) => {
            let stripe = (0..planes as u64).map(|i| static_plane(geo, order, i)).collect();
            Box::new(StaticOrder { stripe, counter: 0 })
        }
        None if *cfg == AllocConfig::LeastBusy => {
            Box::new(LeastBusy { dies: geo.total_dies(), planes_per_die: geo.planes, rr: 0 })
        }
        None => Box::new(LeastUtilised { planes, rr: 0 }),
    }
}

/// Consecutive pages striped over the array in a fixed order.
pub struct StaticOrder {
    /// One period of the order's planes (it repeats every plane count).
    stripe: Vec<u32>,
    /// Pages placed so far.
    counter: u64,
}

impl StaticOrder {
    /// Plane of the `i`-th page.
    fn plane(&self, i: u64) -> u32 {
        self.stripe[(i % self.stripe.len() as u64) as usize]
    }
}

impl Placement for StaticOrder {
    fn user_plane(
        &mut self,
        room: &dyn Fn(u32) -> bool,
        _: &BlockManager,
        _: &dyn Fn(DieIdx) -> u32,
    ) -> Option<u32> {
        // The next plane in the order; if it is full, the first one after it with room (a
        // plane GC cannot clean must not stall every write). (A write that finds no room
        // anywhere looks at every plane, once per wake-up while it waits: the period is walked
        // in place, without a division per plane.)
        let off = (self.counter % self.stripe.len() as u64) as usize;
        let (before, from) = self.stripe.split_at(off);
        let k = from.iter().chain(before).position(|&p| room(p))?;
        self.counter += k as u64 + 1;
        Some(self.stripe[(off + k) % self.stripe.len()])
    }

    fn turn(&self, i: u64) -> u32 {
        self.plane(i)
    }

    fn cursor(&self) -> u64 {
        self.counter
    }

    fn set_cursor(&mut self, cursor: u64) {
        self.counter = cursor;
    }
}

/// The die with the fewest transactions queued or running in the FIL (the first in turn among
/// ties, starting after the last die chosen), and its plane with the most free blocks (the
/// last among ties).
pub struct LeastBusy {
    dies: u32,
    planes_per_die: u32,
    /// The die after the last one chosen: where the search for ties starts.
    rr: u32,
}

impl Placement for LeastBusy {
    fn user_plane(
        &mut self,
        room: &dyn Fn(u32) -> bool,
        blocks: &BlockManager,
        die_load: &dyn Fn(DieIdx) -> u32,
    ) -> Option<u32> {
        let (dies, ppd) = (self.dies, self.planes_per_die);
        let best = (0..dies)
            .map(|k| (self.rr + k) % dies)
            .filter(|&d| (0..ppd).any(|p| room(d * ppd + p)))
            .min_by_key(|&d| die_load(DieIdx(d)))?;
        let p =
            (0..ppd).map(|p| best * ppd + p).filter(|&p| room(p)).max_by_key(|&p| blocks.free_count(p))?;
        self.rr = (best + 1) % dies;
        Some(p)
    }

    fn turn(&self, i: u64) -> u32 {
        (i % (self.dies * self.planes_per_die) as u64) as u32
    }

    fn cursor(&self) -> u64 {
        self.rr as u64
    }

    fn set_cursor(&mut self, cursor: u64) {
        self.rr = (cursor % self.dies as u64) as u32;
    }
}

/// The plane with the most free blocks (the most room; the last plane among ties).
pub struct LeastUtilised {
    planes: u32,
    /// Where the search starts (never moved).
    rr: u32,
}

impl Placement for LeastUtilised {
    fn user_plane(
        &mut self,
        room: &dyn Fn(u32) -> bool,
        blocks: &BlockManager,
        _: &dyn Fn(DieIdx) -> u32,
    ) -> Option<u32> {
        (0..self.planes)
            .map(|k| (self.rr + k) % self.planes)
            .filter(|&p| room(p))
            .max_by_key(|&p| blocks.free_count(p))
    }

    fn turn(&self, i: u64) -> u32 {
        (i % self.planes as u64) as u32
    }
}

/// Plane of the `i`-th page under the static `order` (fastest dimension first).
fn static_plane(g: &Geometry, order: [Dim; 4], i: u64) -> u32 {
    let mut rest = i;
    let mut coord = [0u32; 4];
    for dim in order {
        let n = match dim {
            Dim::C => g.channels,
            Dim::W => g.ways,
            Dim::D => g.dies,
            Dim::P => g.planes,
        } as u64;
        coord[dim as usize] = (rest % n) as u32;
        rest /= n;
    }
    let [c, w, d, p] = coord;
    let ppa = Ppa { channel: c as u16, way: w as u16, die: d as u8, plane: 0, block: 0, page: 0 };
    g.die_idx(ppa).0 * g.planes + p
}
