//! The FTL's flash primitives: reads that pin their block against erasure, programs that
//! settle their block's pending count, page allocation that waits for GC when a plane is full,
//! and invalidation.

use nand::{PageIdx, UnitAddr};

use crate::fil::{FlashRequest, FlashStatus, PageWrite, TxnResult, TxnSource};
use crate::ftl::alloc::keep;
use crate::ftl::blocks::Stream;
use crate::ftl::state::FtlInner;
use crate::ftl::waits::WaitKey;

/// A read that failed: the page store broke or the ECC could not correct it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MediaError {
    /// More bit errors than the ECC corrects.
    #[error("uncorrectable read")]
    Uncorrectable,
    /// The NAND image could not be read or written.
    #[error("page store: {0}")]
    Store(String),
}

fn source(stream: Stream) -> TxnSource {
    match stream {
        Stream::User => TxnSource::User,
        Stream::Gc => TxnSource::Gc,
        Stream::Mapping => TxnSource::Mapping,
    }
}

impl FtlInner {
    /// Submits a read with its block pinned (GC waits for pins before erasing). Pin before any
    /// await after looking the address up.
    pub async fn read_pinned(&self, req: FlashRequest) -> TxnResult {
        self.pin(req.page);
        self.read_then_unpin(req).await
    }

    /// Pins the block of `page` against erasure (a read of it is coming).
    pub fn pin(&self, page: PageIdx) {
        self.blocks.borrow_mut().pin(self.geo.block_of(page));
    }

    /// Submits a read whose block the caller pinned, and unpins it when the read is done.
    pub async fn read_then_unpin(&self, req: FlashRequest) -> TxnResult {
        let block = self.geo.block_of(req.page);
        let r = self.fil.submit(req).await;
        let mut blocks = self.blocks.borrow_mut();
        blocks.unpin(block);
        if blocks.info(block).pins == 0 {
            drop(blocks);
            self.waits.notify(WaitKey::Unpinned(block));
        }
        r
    }

    /// Checks a finished read of `page`: store errors, then (if configured) the ECC.
    pub async fn check_read(&self, page: PageIdx, r: &TxnResult) -> Result<(), MediaError> {
        if let FlashStatus::StoreError(e) = &r.status {
            return Err(MediaError::Store(e.clone()));
        }
        if let Some(ecc) = &self.ecc {
            let erase_count = self.fil.array().borrow().block(self.geo.block_of(page)).erase_count;
            if ecc.check(erase_count).await.is_err() {
                self.stats.borrow_mut().uncorrectable_reads += 1;
                return Err(MediaError::Uncorrectable);
            }
        }
        Ok(())
    }

    /// Programs `page` for `stream` (holding `units` valid units) and settles its block.
    pub async fn program(&self, stream: Stream, page: PageIdx, write: PageWrite, units: u32) -> TxnResult {
        let r = self.fil.submit(FlashRequest::program(source(stream), page, write)).await;
        self.programmed(stream, page, units);
        r
    }

    /// Queues a program of `page` for `stream` and returns where its result arrives; the
    /// caller passes the result to [`programmed`](Self::programmed). Queue pages of a block in
    /// the order they were allocated.
    pub async fn start_program(
        &self,
        stream: Stream,
        page: PageIdx,
        write: PageWrite,
    ) -> crate::fil::TxnReceiver {
        self.fil.enqueue(FlashRequest::program(source(stream), page, write)).await
    }

    /// A program of `page` (holding `units` valid units) finished: settles its block and counts it.
    pub fn programmed(&self, stream: Stream, page: PageIdx, units: u32) {
        self.blocks.borrow_mut().done_pending(self.geo.block_of(page), 1);
        let mut st = self.stats.borrow_mut();
        st.pages_programmed[stream as usize] += 1;
        st.units_programmed[stream as usize] += units as u64;
    }

    /// The next page for `stream` (GC passes the victim's plane). Waits for GC when no plane
    /// has room, and starts background GC where free blocks run low. A waiting write wakes
    /// when a plane gains room for it (see [`gained_a_block`](Self::gained_a_block)), not at
    /// every erase.
    pub async fn alloc_page(&self, stream: Stream, plane: Option<u32>) -> PageIdx {
        let hard = self.cfg.gc.hard_free;
        let mut waited = false;
        loop {
            let got = {
                let mut alloc = self.alloc.borrow_mut();
                let mut blocks = self.blocks.borrow_mut();
                let chosen = match (stream, plane) {
                    (_, Some(p)) => Some(p),
                    (Stream::User, None) => {
                        let (fil, admit) = (&self.fil, self.gc.admit);
                        let off = !self.gc.admitting;
                        let (allowance, gc) = (self.gc.allowance.borrow(), self.gc.active.borrow());
                        let blocks = &*blocks;
                        // A plane whose GC is not running (it found nothing worth collecting)
                        // has no progress to admit writes against: they go on.
                        let admitted = |p: u32| {
                            off || blocks.free_count(p) > admit
                                || allowance[p as usize] > 0.0
                                || !gc[p as usize]
                        };
                        alloc.user_plane(blocks, hard, &|d| fil.die_load(d), &admitted)
                    }
                    (_, None) => alloc.mapping_plane(&blocks),
                };
                chosen.and_then(|p| alloc.page_in(stream, p, &mut blocks, hard).map(|page| (p, page)))
            };
            match got {
                Some((p, page)) => {
                    if self.gc.paced && stream != Stream::Gc {
                        self.pace(p);
                        self.spend_allowance(p);
                    }
                    self.maybe_start_gc(p);
                    return page;
                }
                None => {
                    if stream == Stream::User && !waited {
                        self.stats.borrow_mut().foreground_gc_waits += 1;
                    }
                    waited = true;
                    self.start_gc_everywhere_needed();
                    let key = match plane {
                        Some(p) => WaitKey::PlaneRoom(p),
                        None => WaitKey::Room(stream),
                    };
                    self.waits.wait(key).await;
                    self.stats.borrow_mut().room_wakeups += 1;
                }
            }
        }
    }

    /// `plane` gained a free block (an erase): wakes the writes it gives room to. GC of the
    /// plane can take any free block; translation pages leave the plane one, host data the
    /// foreground reserve (see `alloc::keep`), so those wake only when the plane's free blocks
    /// go past that (no plane had room while they waited: this is the first).
    pub fn gained_a_block(&self, plane: u32) {
        let free = self.blocks.borrow().free_count(plane);
        self.waits.notify(WaitKey::PlaneRoom(plane));
        for stream in [Stream::Gc, Stream::Mapping, Stream::User] {
            if free == keep(stream, self.cfg.gc.hard_free) + 1 {
                self.waits.notify(WaitKey::Room(stream));
            }
        }
        if self.gc.admitting && free == self.gc.admit + 1 {
            // Host writes no longer wait for this plane's GC to admit them.
            self.waits.notify(WaitKey::Room(Stream::User));
        }
    }

    /// Marks a unit's copy stale, and starts GC in its plane if the plane is short of free
    /// blocks and GC stopped there for want of a victim worth collecting: this may be one.
    pub fn invalidate(&self, unit: UnitAddr) {
        self.fil.array().borrow_mut().invalidate(unit);
        let (page, _) = self.geo.unit_page(unit);
        let block = self.geo.block_of(page);
        let plane = self.blocks.borrow().plane_of(block);
        if self.gc.paced {
            self.unstall_if_worthwhile(plane, block);
        }
        self.maybe_start_gc(plane);
    }
}
