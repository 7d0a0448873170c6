//! The FTL's policies that research swaps, as objects: built from the configuration, or handed
//! in by a library user (a GC victim picker of their own, say) when the device is built.

use std::rc::Rc;

use crate::ftl::config::FtlConfig;
use crate::ftl::gc::victim::VictimPicker;

/// The FTL's swappable policies.
#[derive(Clone)]
pub struct Policies {
    /// Which block GC collects next.
    pub victim: Rc<dyn VictimPicker>,
}

impl Policies {
    /// The policies `cfg` names.
    pub fn of(cfg: &FtlConfig) -> Policies {
        Policies { victim: cfg.gc.victim.picker() }
    }
}
