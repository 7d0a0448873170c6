//! [`Fil`]: the handle firmware uses to submit flash transactions, and the FIL task it starts.

use std::cell::{Ref, RefCell};
use std::rc::Rc;

use nand::{FlashArray, Geometry, PageIdx, TimingModel};
use sim::sync::Ring;
use sim::{CoreId, Cx, SimDuration};

use crate::fil::completion::{Completions, TxnReceiver};
use crate::fil::config::FilConfig;
use crate::fil::engine::Engine;
use crate::fil::stats::FilStats;
use crate::fil::txn::{FlashRequest, PageWrite, Txn, TxnResult, TxnSource};

/// The flash array, shared by the FIL (which programs, reads and erases it) and the FTL (which
/// marks units invalid and inspects blocks for GC).
pub type SharedArray = Rc<RefCell<FlashArray>>;

pub(crate) struct Shared {
    pub cx: Cx,
    pub geo: Geometry,
    pub timing: TimingModel,
    pub cfg: FilConfig,
    pub ring: Ring<Box<Txn>>,
    pub array: SharedArray,
    pub stats: RefCell<FilStats>,
    /// Transactions enqueued and not yet completed, per die.
    pub load: Vec<std::cell::Cell<u32>>,
    /// Where submitters wait for their answers.
    pub completions: Completions,
}

impl Shared {
    /// Answers `txn`: its submitter sees the result `latency` from now.
    pub fn answer(&self, txn: Box<Txn>, latency: SimDuration) {
        let at = self.cx.now() + latency;
        if let Some(w) = self.completions.finish(txn, at) {
            self.cx.wake_at(at, &w);
        }
    }
}

/// The flash interface layer, as seen by firmware above it. Cheap to clone.
#[derive(Clone)]
pub struct Fil {
    sh: Rc<Shared>,
}

impl Fil {
    /// Starts the FIL service loop on `core` and returns its handle. `cfg` must be validated.
    pub fn start(cx: &Cx, core: CoreId, cfg: &FilConfig, timing: TimingModel, array: SharedArray) -> Fil {
        let geo = array.borrow().geometry().clone();
        let stats = FilStats::new(geo.total_dies() as usize, geo.channels as usize, timing.cell.page_types());
        let load = (0..geo.total_dies()).map(|_| std::cell::Cell::new(0)).collect();
        let sh = Rc::new(Shared {
            load,
            cx: cx.clone(),
            ring: Ring::new(cx, "fil available ring", cfg.avail_ring.clone()),
            geo,
            timing,
            cfg: cfg.clone(),
            array,
            stats: RefCell::new(stats),
            completions: Completions::default(),
        });
        cx.spawn_daemon(core, "fil", Engine::new(sh.clone()).run());
        Fil { sh }
    }

    /// Puts a transaction on the available ring (charging the enqueue cost on the caller's core
    /// and waiting while the ring is full) and returns where its result will arrive. Pushes
    /// keep their order, so pages of a block enqueued in order are programmed in order.
    pub async fn enqueue(&self, req: FlashRequest) -> TxnReceiver {
        let slot = self.sh.completions.open();
        let die = self.sh.geo.die_of(self.sh.geo.block_of(req.page));
        let load = &self.sh.load[die.idx()];
        load.set(load.get() + 1);
        let mut txn = Box::new(Txn::new(req, slot, self.sh.cx.now()));
        if self.sh.cx.tracing() {
            txn.request = self.sh.cx.request();
        }
        // The receiver exists before the push can wait, so a dropped enqueue frees its slot.
        let rx = TxnReceiver { sh: self.sh.clone(), slot, armed: false };
        self.sh.ring.push(txn).await;
        rx
    }

    /// Submits a transaction and waits for its result.
    pub async fn submit(&self, req: FlashRequest) -> TxnResult {
        self.enqueue(req).await.await
    }

    /// Reads a whole page.
    pub async fn read(&self, source: TxnSource, page: PageIdx) -> TxnResult {
        self.submit(FlashRequest::read(source, page)).await
    }

    /// Programs a page.
    pub async fn program(&self, source: TxnSource, page: PageIdx, write: PageWrite) -> TxnResult {
        self.submit(FlashRequest::program(source, page, write)).await
    }

    /// Erases the block holding `page`.
    pub async fn erase(&self, source: TxnSource, page: PageIdx) -> TxnResult {
        self.submit(FlashRequest::erase(source, page)).await
    }

    /// Transactions enqueued on `die` and not yet completed (for load-aware allocation).
    pub fn die_load(&self, die: nand::DieIdx) -> u32 {
        self.sh.load[die.idx()].get()
    }

    /// Statistics so far.
    pub fn stats(&self) -> Ref<'_, FilStats> {
        self.sh.stats.borrow()
    }

    /// The flash array.
    pub fn array(&self) -> &SharedArray {
        &self.sh.array
    }

    /// The erase count of every good block of the array, in block order.
    pub fn erase_counts(&self) -> Vec<u32> {
        self.sh.array.borrow().blocks().iter().filter(|b| !b.bad).map(|b| b.erase_count).collect()
    }

    /// The array geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.sh.geo
    }

    /// The timing model.
    pub fn timing(&self) -> &TimingModel {
        &self.sh.timing
    }

    /// The configuration.
    pub fn config(&self) -> &FilConfig {
        &self.sh.cfg
    }
}
