//! Assembling a device on the architecture its configuration names.
//!
//! ```text
//!   softssd    core hil: fetcher + k workers per queue (HIL, FTL), GC | core fil: FIL | core ecc
//!   tradition  cores 0..N: a fetcher and w request coroutines each, whole requests, locks
//!              on the queues, the cache index, the mapping table and every cache line;
//!              the flash controller's sequencer schedules flash unless a FIL core is set
//!   pipessd    fetch core -> FTL core -> FIL core -> post core, a coroutine per command
//!              moved along SPSC stage queues; GC on the FTL core
//!   deepflash  gather core -> translation core of the LPN's range -> flash-scheduling core
//!              -> gather core; GC on the first translation core
//! ```

use std::rc::Rc;

use crate::arch::config::ArchitectureConfig;
use crate::arch::flow::Flow;
use crate::device::Device;
use crate::ecc::Ecc;
use crate::ftl::{Ftl, Mount, MountReport};
use crate::hil::{Controller, HilLayout};
use crate::platform::Platform;

/// Builds the device on `p`: a fresh FTL, or one mounted over the array's data.
pub fn build(p: Platform, mount: Option<Mount<'_>>) -> Result<(Device, Option<MountReport>), String> {
    let cfg = &p.config;
    let cx = p.sim.cx();
    let n = cfg.controller.cores.len();
    let arch = &cfg.architecture;
    let core = |i: usize| p.cores[i];
    // Where background FTL work (GC, write-back jobs, mapping rewrites) is spawned.
    let home = match arch {
        ArchitectureConfig::Softssd { hil_core, .. } => *hil_core,
        ArchitectureConfig::Tradition { .. } => arch.fil_core().unwrap_or(0),
        ArchitectureConfig::Pipessd { ftl_core, .. } => *ftl_core,
        ArchitectureConfig::Deepflash { trans_cores, .. } => trans_cores[0],
    };
    let ecc = Ecc::start(&cx, core(arch.ecc_core()), &cfg.ecc, cfg.geometry.page_bytes());
    let (ftl, report) = match mount {
        None => (Ftl::new(&cx, core(home), p.fil.clone(), ecc, &cfg.ftl), None),
        Some(how) => {
            let (ftl, report) = Ftl::mount(&cx, core(home), p.fil.clone(), ecc, &cfg.ftl, how)?;
            (ftl, Some(report))
        }
    };
    let (flow, layout) = match arch {
        ArchitectureConfig::Softssd { hil_core, .. } => {
            (Flow::plain(&cx), HilLayout::Workers { core: core(*hil_core) })
        }
        ArchitectureConfig::Tradition { cores, workers_per_core, locks, .. } => (
            Flow::locked(&cx, locks),
            HilLayout::PerCore {
                cores: (0..cores.unwrap_or(n)).map(core).collect(),
                workers: *workers_per_core,
            },
        ),
        ArchitectureConfig::Pipessd { fetch_core, ftl_core, fil_core, post_core, queue, .. } => (
            Flow::pipeline(&cx, [*fetch_core, *ftl_core, *fil_core, *post_core].map(core), *queue),
            HilLayout::PerCommand { core: core(*fetch_core) },
        ),
        ArchitectureConfig::Deepflash { gather_core, trans_cores, fcmd_core, queue, locks, .. } => (
            Flow::functions(
                &cx,
                core(*gather_core),
                trans_cores.iter().map(|&c| core(c)).collect(),
                core(*fcmd_core),
                *queue,
                locks,
                ftl.logical_units(),
            ),
            HilLayout::PerCommand { core: core(*gather_core) },
        ),
    };
    ftl.set_flow(Rc::new(flow));
    let controller = Controller::start(&cx, layout, &cfg.host, ftl.clone(), cfg.ftl.bypass);
    Ok((Device { platform: p, ftl, controller }, report))
}
