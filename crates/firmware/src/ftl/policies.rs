//! The FTL's policies that research swaps, as objects: built from the configuration, or handed
//! in by a library user (a GC victim picker of their own, say) when the device is built.

use std::rc::Rc;

use nand::Geometry;

use crate::ftl::config::FtlConfig;
use crate::ftl::gc::victim::VictimPicker;
use crate::ftl::gc::wl::{NoStaticWl, StaticWl, WearLeveller};
use crate::ftl::place::{Placement, placement};
use crate::ftl::writeback_policy::WriteBackPolicy;

/// The FTL's swappable policies.
pub struct Policies {
    /// Which plane each page of host data goes to.
    pub placement: Box<dyn Placement>,
    /// When dirty cache lines go to flash.
    pub write_back: Rc<dyn WriteBackPolicy>,
    /// Which block GC collects next.
    pub victim: Rc<dyn VictimPicker>,
    /// Which cold block static wear levelling migrates after a collection.
    pub wl: Rc<dyn WearLeveller>,
}

impl Policies {
    /// The policies `cfg` names, on `geo`.
    pub fn of(cfg: &FtlConfig, geo: &Geometry) -> Policies {
        let wl: Rc<dyn WearLeveller> = match cfg.wl.static_threshold {
            Some(threshold) => Rc::new(StaticWl { threshold }),
            None => Rc::new(NoStaticWl),
        };
        Policies {
            placement: placement(geo, &cfg.allocation),
            write_back: cfg.cache.write_back_policy(geo),
            victim: cfg.gc.victim.picker(),
            wl,
        }
    }
}
