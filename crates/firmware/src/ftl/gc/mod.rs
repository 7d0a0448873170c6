//! Garbage collection and static wear levelling: the GC part's state (which planes are being
//! collected, and the policies choosing victims), the collection flows (`collect`), victim
//! policies (`victim`) and wear levelling (`wl`).

mod collect;
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
}

impl Gc {
    /// GC over `planes` planes, with these policies.
    pub fn new(planes: usize, victim: Rc<dyn VictimPicker>, wl: Rc<dyn WearLeveller>) -> Gc {
        Gc { active: RefCell::new(vec![false; planes]), victim, wl }
    }
}
