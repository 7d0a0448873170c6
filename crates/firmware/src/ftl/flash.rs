//! The FTL's flash primitives: reads that pin their block against erasure and go through the
//! ECC, programs that settle their block's pending count (and may fail, see `retire`), page
//! allocation that waits for GC when a plane is full, and invalidation.

use nand::{PageIdx, UnitAddr};
use smallvec::SmallVec;

use sim::SimDuration;

use crate::ecc::{PageBytes, PageRead};
use crate::fil::{FlashRequest, FlashStatus, FlowTag, PageWrite, TxnResult, TxnSource};
use crate::ftl::alloc::{Lane, keep};
use crate::ftl::blocks::Stream;
use crate::ftl::fdp::Placed;
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

/// How a checked read re-reads its page for a retry: as the first read was asked.
#[derive(Clone, Copy)]
struct Again {
    source: TxnSource,
    xfer_bytes: u32,
    want_data: bool,
    want_oob: bool,
    want_parity: bool,
    flow: FlowTag,
}

fn source(stream: Stream) -> TxnSource {
    match stream {
        Stream::User => TxnSource::User,
        Stream::Gc => TxnSource::Gc,
        Stream::Mapping => TxnSource::Mapping,
    }
}

impl FtlInner {
    /// Pins the block of `page` against erasure (a read of it is coming).
    pub fn pin(&self, page: PageIdx) {
        self.blocks.borrow_mut().pin(self.geo.block_of(page));
    }

    /// Every mapping unit of a page, as [`read_checked`](Self::read_checked)'s mask.
    pub fn whole_page(&self) -> u32 {
        (1u32 << self.geo.units_per_page()) - 1 // at most 16 units a page
    }

    /// Reads the mapping units `units` (bit i: unit i) of a page whose block the caller
    /// pinned, checks them (store errors, then the ECC, which may re-read the page down the
    /// error model's retry table while the block stays pinned; with bytes and parity it
    /// corrects them in the result's page) and unpins it. Returns the last read's result, the
    /// check, and the time from the first read's end to the check's (decoding and retries: the
    /// request's `ecc` phase). On a failed check the result's bytes are not to be returned.
    pub async fn read_checked(
        &self,
        req: FlashRequest,
        units: u32,
    ) -> (TxnResult, Result<(), MediaError>, SimDuration) {
        let (page, block) = (req.page, self.geo.block_of(req.page));
        let again = Again {
            source: req.source,
            xfer_bytes: req.xfer_bytes,
            want_data: req.want_data,
            want_oob: req.want_oob,
            want_parity: req.want_parity,
            flow: req.flow,
        };
        let mut r = self.fil.submit(req).await;
        let t = self.cx.now();
        let checked = self.check_read(page, units, &mut r, again).await;
        let mut blocks = self.blocks.borrow_mut();
        blocks.unpin(block);
        if blocks.info(block).pins == 0 {
            drop(blocks);
            self.waits.notify(WaitKey::Unpinned(block));
        }
        (r, checked, self.cx.now().since(t))
    }

    /// Checks a finished read of the units `units` of `page`: store errors, then (if
    /// configured) the ECC, at each attempt re-reading the page as `again` asked.
    async fn check_read(
        &self,
        page: PageIdx,
        units: u32,
        r: &mut TxnResult,
        again: Again,
    ) -> Result<(), MediaError> {
        let (unit_bytes, data_bytes) = (self.geo.unit_bytes(), units.count_ones() * self.geo.unit_bytes());
        if let FlashStatus::StoreError(e) = &r.status {
            return Err(MediaError::Store(e.clone()));
        }
        let Some(ecc) = &self.ecc else { return Ok(()) };
        let block = self.geo.block_of(page);
        let offset = self.geo.page_in_block(page);
        // The data the read asks for (0: the whole page, as the ECC takes it); host reads' alone
        // count towards UBER.
        let asked =
            if data_bytes == 0 { self.geo.page_bytes() } else { data_bytes.min(self.geo.page_bytes()) };
        let host = again.source == TxnSource::User;
        let (host_bits, internal) = if host { (8 * asked as u64, 0) } else { (0, 1) };
        for (i, &attempt) in ecc.attempts().iter().enumerate() {
            if i > 0 {
                for _ in 0..ecc.array_reads(attempt) {
                    let mut req = FlashRequest::read(again.source, page).for_flow(again.flow);
                    (req.xfer_bytes, req.want_data, req.want_oob, req.want_parity) =
                        (again.xfer_bytes, again.want_data, again.want_oob, again.want_parity);
                    *r = self.fil.submit(req).await;
                    if let FlashStatus::StoreError(e) = &r.status {
                        return Err(MediaError::Store(e.clone()));
                    }
                }
            }
            let at = {
                let array = self.fil.array().borrow();
                PageRead {
                    block,
                    offset,
                    erase_count: array.block(block).erase_count,
                    reads_since_erase: array.reads_since_erase(block),
                    data_bytes,
                }
            };
            // Each attempt reads the page afresh: the errors of the last are not in this one.
            let bytes = match r.bytes_mut() {
                (Some(data), Some(parity)) => Some(PageBytes { data, parity, units, unit_bytes }),
                _ => None,
            };
            let outcome = ecc.check(at, attempt, bytes).await;
            let mut st = self.stats.borrow_mut();
            st.ecc.pages_checked += 1;
            match outcome {
                Ok(c) => {
                    st.ecc.decoded(i, &c);
                    st.ecc.data_bits_read += host_bits;
                    st.ecc.internal_reads += internal;
                    return Ok(());
                }
                Err(u) => st.ecc.decode_cycles += u.cycles,
            }
        }
        let mut st = self.stats.borrow_mut();
        st.ecc.uncorrectable_reads += 1;
        st.ecc.data_bits_read += host_bits;
        st.ecc.internal_reads += internal;
        if host {
            st.ecc.units_uncorrectable += asked.div_ceil(self.geo.unit_bytes()) as u64;
        }
        Err(MediaError::Uncorrectable)
    }

    /// Programs `page` for `flow` in `stream`'s queue and settles it as a page of `counted`
    /// (holding `units` valid units). The status is [`FlashStatus::ProgramFailed`] if the NAND
    /// failed the program (see [`settle_program`](Self::settle_program)).
    async fn program_counted(
        &self,
        (stream, counted, flow): (Stream, Stream, FlowTag),
        page: PageIdx,
        write: PageWrite,
        units: u32,
    ) -> TxnResult {
        self.blocks.borrow_mut().programmed_for(self.geo.block_of(page), flow);
        let req = FlashRequest::program(source(stream), page, write).for_flow(flow);
        let mut r = self.fil.submit(req).await;
        self.settle_program(counted, page, units, &mut r);
        r
    }

    /// Programs `write` into `page` (allocated for `lane`, in `plane` if given) in that
    /// lane's stream's queue, counted as a page of `counted`; while the NAND fails the program,
    /// again into another page of the lane. Returns the page that holds it and the result.
    pub async fn program_retrying(
        &self,
        (lane, counted): (Lane, Stream),
        plane: Option<u32>,
        page: PageIdx,
        write: PageWrite,
        units: u32,
    ) -> (PageIdx, TxnResult) {
        self.program_retrying_for(FlowTag::NONE, (lane, counted), plane, page, write, units).await
    }

    /// [`program_retrying`](Self::program_retrying) for `flow` (its programs count for it).
    pub async fn program_retrying_for(
        &self,
        flow: FlowTag,
        (lane, counted): (Lane, Stream),
        plane: Option<u32>,
        mut page: PageIdx,
        mut write: PageWrite,
        units: u32,
    ) -> (PageIdx, TxnResult) {
        let stream = lane.stream;
        loop {
            // A copy to program again (only where programs can fail: it costs a page of bytes).
            let again = self.ecc.as_ref().is_some_and(|e| e.models_errors()).then(|| write.clone());
            let r = self.program_counted((stream, counted, flow), page, write, units).await;
            match again {
                Some(w) if r.status == FlashStatus::ProgramFailed => write = w,
                _ => return (page, r),
            }
            page = self.alloc_page_in(lane, plane, Placed::DEFAULT).await;
        }
    }

    /// Queues a program of `page` for `stream`, done for `flow`, and returns where its result
    /// arrives; the caller passes the result to [`settle_program`](Self::settle_program). Queue
    /// pages of a block in the order they were allocated.
    pub async fn start_program(
        &self,
        (stream, flow): (Stream, FlowTag),
        page: PageIdx,
        write: PageWrite,
    ) -> crate::fil::TxnReceiver {
        self.blocks.borrow_mut().programmed_for(self.geo.block_of(page), flow);
        self.fil.enqueue(FlashRequest::program(source(stream), page, write).for_flow(flow)).await
    }

    /// A program of `page` (holding `units` valid units) finished: settles its block and counts it.
    pub fn programmed(&self, stream: Stream, page: PageIdx, units: u32) {
        let block = self.geo.block_of(page);
        let retiring_and_done = {
            let mut blocks = self.blocks.borrow_mut();
            blocks.done_pending(block, 1);
            let i = blocks.info(block);
            i.retiring && i.pending == 0
        };
        if retiring_and_done {
            self.kick_relocation(self.blocks.borrow().plane_of(block));
        }
        if let Some(ecc) = &self.ecc {
            ecc.programmed(self.geo.block_of(page), self.geo.page_in_block(page));
        }
        let mut st = self.stats.borrow_mut();
        st.pages_programmed[stream as usize] += 1;
        st.units_programmed[stream as usize] += units as u64;
    }

    /// The next page for `stream` (GC passes the victim's plane). Waits for GC when no plane
    /// has room, and starts background GC where free blocks run low. A waiting write wakes
    /// when a plane gains room for it (see [`gained_a_block`](Self::gained_a_block)), not at
    /// every erase.
    pub async fn alloc_page(&self, stream: Stream, plane: Option<u32>) -> PageIdx {
        self.alloc_page_in(Lane::of(stream), plane, Placed::DEFAULT).await
    }

    /// [`alloc_page`](Self::alloc_page) from `lane`'s frontiers; a user page without a plane
    /// goes to `place`'s FDP reclaim group if it names one, and to its NVM set's planes. Host pages under FDP count towards their
    /// handle's reclaim unit.
    pub async fn alloc_page_in(&self, lane: Lane, plane: Option<u32>, place: Placed) -> PageIdx {
        let stream = lane.stream;
        let hard = self.cfg.gc.hard_free;
        let mut waited = false;
        let fdp = self.cfg.fdp.as_ref();
        let in_group = |p: u32| {
            (match (fdp, place.group()) {
                (Some(f), Some(g)) => f.group_of_plane(&self.geo, p) == g,
                _ => true,
            }) && self.set_admits(place.set(), p)
        };
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
                        // has no progress to admit writes against: they go on. Worked out for
                        // every plane at once, without branches: the placement asks plane after
                        // plane, and under pacing most refuse (in GC steady state a scan asked
                        // 110 of 128 planes on average, each a mispredicted branch on cold
                        // data). The tests are pure, so the answers are the same.
                        let paced: SmallVec<[bool; 256]> = if off {
                            SmallVec::new()
                        } else {
                            (0..blocks.planes())
                                .map(|p| {
                                    (blocks.free_count(p) > admit)
                                        | (allowance[p as usize] > 0.0)
                                        | !gc[p as usize]
                                })
                                .collect()
                        };
                        let admitted = |p: u32| (off || paced[p as usize]) && in_group(p);
                        alloc.user_plane_in(
                            lane.handle,
                            place.set(),
                            blocks,
                            hard,
                            &|d| fil.die_load(d),
                            &admitted,
                        )
                    }
                    (_, None) => alloc.mapping_plane(&blocks),
                };
                chosen.and_then(|p| {
                    alloc.pages_in_lane(lane, p, 1, &mut blocks, hard).map(|(page, _)| (p, page))
                })
            };
            match got {
                Some((p, page)) => {
                    if stream == Stream::User && self.fdp.is_some() {
                        self.fdp_page_used(lane.handle, p);
                    }
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
