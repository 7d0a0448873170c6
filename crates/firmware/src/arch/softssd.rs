//! The SoftSSD architecture: one coroutine per request on the HIL/FTL core, suspended on
//! flash, DMA and ECC; the FIL on its own core; the ECC on a third.
//!
//! ```text
//!   core hil_core: fetcher + k workers per queue (HIL, FTL), GC
//!        │ available ring ▲ used ring
//!   core fil_core: FIL ───────────────▶ dies / channels
//!   core ecc_core: software correction (only for pages with bit errors)
//! ```

use crate::device::Device;
use crate::ecc::Ecc;
use crate::ftl::{Ftl, Mount, MountReport};
use crate::hil::Controller;
use crate::platform::Platform;

/// Builds a SoftSSD device on `p`: a fresh FTL, or one mounted over the array's data.
pub fn build(
    p: Platform,
    hil_core: usize,
    ecc_core: usize,
    mount: Option<Mount<'_>>,
) -> Result<(Device, Option<MountReport>), String> {
    let cfg = &p.config;
    let cx = p.sim.cx();
    let ecc = Ecc::start(&cx, p.cores[ecc_core], &cfg.ecc, cfg.geometry.page_bytes());
    let (ftl, report) = match mount {
        None => (Ftl::new(&cx, p.cores[hil_core], p.fil.clone(), ecc, &cfg.ftl), None),
        Some(how) => {
            let (ftl, report) = Ftl::mount(&cx, p.cores[hil_core], p.fil.clone(), ecc, &cfg.ftl, how)?;
            (ftl, Some(report))
        }
    };
    let controller = Controller::start(&cx, p.cores[hil_core], &cfg.host, ftl.clone(), cfg.ftl.bypass);
    Ok((Device { platform: p, ftl, controller }, report))
}
