//! Garbage collection and static wear levelling: the GC part's state (which planes are being
//! collected, and the policies choosing victims), the collection flows (`collect`), victim
//! policies (`victim`) and wear levelling (`wl`).

mod collect;
pub(crate) use collect::PageUnits;
pub mod theory;
pub mod victim;
pub mod wl;

use std::cell::RefCell;
use std::rc::Rc;

use crate::ftl::gc::victim::VictimPicker;
use crate::ftl::gc::wl::WearLeveller;

/// The GC part.
pub(crate) struct Gc {
    /// Planes with a GC task running.
    pub active: RefCell<Vec<bool>>,
    /// Which block GC collects next.
    pub victim: Rc<dyn VictimPicker>,
    /// Which cold block static wear levelling migrates after a collection, if any.
    pub wl: Rc<dyn WearLeveller>,
    /// Background GC is paced against host writes (`GcPacing::Paced`).
    pub paced: bool,
    /// Stale units that make a victim worth collecting at once (paced).
    pub worthwhile: u32,
    /// Per plane: stale units background GC may still gain from poorer victims, earned by the
    /// space host and mapping writes consume (paced).
    pub credit: RefCell<Vec<f64>>,
    /// Per plane: background GC stopped for want of credit; the stale units of the victim it
    /// left (paced).
    pub stalled: RefCell<Vec<Option<u32>>>,
    /// Free blocks at or below which a plane admits host writes against its GC's progress
    /// (`hard_free` when it does not: eager GC).
    pub admit: u32,
    /// Host writes are admitted against GC's progress at all (`admit` above `hard_free`).
    pub admitting: bool,
    /// Per plane: units host writes may still take there while it is at or below `admit`,
    /// earned by its GC (each victim's stale units, as its valid units move) and spent by host
    /// and mapping pages; at most a block's worth.
    pub allowance: RefCell<Vec<f64>>,
}

impl Gc {
    /// GC over `planes` planes, with these policies; paced with `worthwhile` stale units or
    /// not; admitting host writes against its progress at `admit` free blocks or fewer (if
    /// that is above `hard_free`).
    pub fn new(
        planes: usize,
        victim: Rc<dyn VictimPicker>,
        wl: Rc<dyn WearLeveller>,
        paced: Option<u32>,
        admit: u32,
        hard_free: u32,
    ) -> Gc {
        Gc {
            active: RefCell::new(vec![false; planes]),
            victim,
            wl,
            paced: paced.is_some(),
            worthwhile: paced.unwrap_or(0),
            credit: RefCell::new(vec![0.0; planes]),
            stalled: RefCell::new(vec![None; planes]),
            admit,
            admitting: admit > hard_free,
            allowance: RefCell::new(vec![0.0; planes]),
        }
    }
}
