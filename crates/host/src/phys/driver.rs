//! Running a physical workload: pre-program what reads need, then one generator task issues
//! transactions in order (closed loop at `qd`, or open loop at `rate`), each completion handled
//! by a small task that frees a slot.

use std::cell::Cell;
use std::rc::Rc;

use firmware::fil::FlashOp;
use firmware::platform::Platform;
use nand::Oob;
use rand::RngExt;
use sim::sync::Notify;
use sim::{CoreId, Deadlock, SimDuration, SimTime, Stop};

use crate::phys::addresses::Addresses;
use crate::phys::report::PhysReport;
use crate::phys::workload::{PhysOp, PhysWorkload};

/// Why a physical workload could not run.
#[derive(Debug, thiserror::Error)]
pub enum PhysError {
    /// The simulation stopped making progress (a firmware bug).
    #[error(transparent)]
    Deadlock(#[from] Deadlock),
    /// The workload would program pages that already hold data (a reopened NAND image).
    #[error("block {block} already holds data and this workload programs it; use a fresh --image")]
    NotFresh {
        /// The first such block.
        block: u32,
    },
    /// The page store failed while pre-programming the read region.
    #[error("pre-programming the read region: {0}")]
    Store(#[from] std::io::Error),
}

/// Runs `w` on `p` and reports. `progress(done, total)` is called every few milliseconds of
/// simulated time (or at the next event after an idle stretch). The workload must be validated against the geometry. Reads use the first
/// blocks of each plane, pre-programmed instantly where they are not programmed yet; programs
/// need the blocks after them to be erased.
pub fn run(
    p: &Platform,
    w: &PhysWorkload,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<PhysReport, PhysError> {
    let geo = p.fil.geometry().clone();
    let mut addrs = Addresses::new(&geo, w);
    {
        let mut array = p.fil.array().borrow_mut();
        if w.programs()
            && let Some(block) = addrs.program_blocks().into_iter().find(|&b| array.block(b).write_ptr > 0)
        {
            return Err(PhysError::NotFresh { block: block.0 });
        }
        if matches!(w.op, PhysOp::Read | PhysOp::Mixed) {
            let oob = Oob::empty(geo.units_per_page());
            for page in addrs.prefill() {
                if geo.page_in_block(page) >= array.block(geo.block_of(page)).write_ptr {
                    array.program(page, &oob, None)?;
                }
            }
        }
    }
    let cx = p.sim.cx();
    let done = Rc::new(Cell::new(0u64));
    let first_submit = Rc::new(Cell::new(None::<SimTime>));
    let (fil, wl, d, first) = (p.fil.clone(), w.clone(), done.clone(), first_submit.clone());
    let c = cx.clone();
    cx.spawn(CoreId::UNBOUND, "phys generator", async move {
        let slots = Rc::new(Notify::new(&c, "phys qd slot"));
        let outstanding = Rc::new(Cell::new(0u32));
        let mut rng = c.fork_rng();
        let start = c.now();
        first.set(Some(start));
        for i in 0..wl.count {
            if let Some(rate) = wl.rate {
                c.sleep_until(start + SimDuration::from_secs_f64(i as f64 / rate)).await;
            }
            while outstanding.get() >= wl.qd {
                slots.notified().await;
            }
            let op = match wl.op {
                PhysOp::Read => FlashOp::Read,
                PhysOp::Program => FlashOp::Program,
                PhysOp::Erase => FlashOp::Erase,
                PhysOp::Mixed if rng.random_range(0..100) < wl.read_pct => FlashOp::Read,
                PhysOp::Mixed => FlashOp::Program,
            };
            let rx = fil.enqueue(addrs.next(op, &mut rng)).await;
            outstanding.set(outstanding.get() + 1);
            let (outstanding, slots, d) = (outstanding.clone(), slots.clone(), d.clone());
            c.spawn(CoreId::UNBOUND, "phys completion", async move {
                rx.await;
                outstanding.set(outstanding.get() - 1);
                d.set(d.get() + 1);
                slots.notify_one();
            });
        }
    });
    let slice = SimDuration::from_millis(5);
    loop {
        let stop = p.sim.run_slice(slice)?;
        progress(done.get(), w.count);
        if stop == Stop::Idle {
            break;
        }
    }
    let start = first_submit.get().unwrap_or(SimTime::ZERO);
    Ok(PhysReport::new(p, w, start, p.sim.now()))
}
