//! Writing dirty cache lines back to flash: units packed into pages of the user stream, the
//! pages programmed in parallel while their mapping entries load, then the mapping moved to the
//! new copies and the old ones invalidated.
//!
//! ```text
//!   host write ─▶ line Dirty ─▶ maybe_flush ─▶ up to flush_parallel jobs on the FTL core
//!                                               │ claim the oldest dirty lines (Writing)
//!                                               │ allocate a page per plane of a die, queue programs
//!                                               │ load missing mapping segments (overlapped)
//!                                               │ remap, invalidate old copies
//!                                               ▼ lines Clean, waiters woken
//! ```
//!
//! In `on-demand` mode (SoftSSD's firmware) the request that needs a line runs the same
//! write-back itself, one page at a time (see `io.rs`).
//!
//! Under FDP a page holds units of one reclaim unit handle (and group) only: a write-back's
//! units are grouped by placement before they are packed, and background write-backs pick
//! their lines so that each handle fills whole pages where it can (see `fdp`).

use nand::{Oob, OobSlot};

use crate::fil::{FlashStatus, FlowTag, PageWrite};
use crate::flow::Point;
use crate::ftl::alloc::Lane;
use crate::ftl::blocks::Stream;
use crate::ftl::cache::LineState;
use crate::ftl::data::UnitData;
use crate::ftl::fdp::Placed;
use crate::ftl::state::FtlInner;
use crate::ftl::waits::WaitKey;
use crate::ftl::writeback_policy::LineCounts;

impl FtlInner {
    /// Writes the given dirty lines back (see [`write_units_back`](Self::write_units_back)).
    pub(crate) async fn write_back(&self, lines: Vec<u32>) {
        let (units, places, flows) = self.claim(lines);
        self.write_units_back(units, places, flows).await;
    }

    /// Lines one background write-back takes: a page of units on every plane of a die.
    pub(crate) fn job_units(&self) -> usize {
        (self.geo.units_per_page() * self.geo.planes) as usize
    }

    /// Marks the still-dirty lines among `lines` as being written back and takes a copy of
    /// their data, where each goes under FDP, and the flow that dirtied each.
    #[allow(clippy::type_complexity)]
    fn claim(&self, lines: Vec<u32>) -> (Vec<(nand::Lpn, UnitData)>, Vec<Placed>, Vec<FlowTag>) {
        let mut units = Vec::with_capacity(lines.len());
        let mut places = Vec::with_capacity(lines.len());
        let mut flows = Vec::with_capacity(lines.len());
        let mut cache = self.cache.borrow_mut();
        for i in lines {
            if cache.line(i).state == LineState::Dirty {
                cache.set_state(i, LineState::Writing);
                let l = cache.line(i);
                units.push((l.lpn, l.data.clone()));
                places.push(l.place);
                flows.push(cache.flow(i));
            }
        }
        (units, places, flows)
    }

    /// Background write-backs: while the write-back policy wants them, start jobs of the
    /// least recently used dirty lines, each spawned on the FTL core, up to the policy's number
    /// in flight. Every job that ends calls this again. A partitioned cache asks the policy
    /// about each partition on its own (its lines against its capacity), the partitions in
    /// turn from the one after the last served, and a job takes one partition's lines.
    pub(crate) fn maybe_flush(&self) {
        let limit = self.wb.policy.parallel();
        let parts = self.cache.borrow().parts();
        let mut asked = 0;
        while self.wb.flushing.get() < limit && asked < parts {
            let part = (self.wb.next_part.get() + asked) % parts;
            if !self.flush_wanted(part) {
                asked += 1;
                continue;
            }
            let batch = match self.fdp.is_some() || self.sets.borrow().any() {
                false => self.cache.borrow().oldest_dirty(part, self.job_units()),
                true => self.fdp_batch(part, self.job_units()),
            };
            let (units, places, flows) = self.claim(batch);
            if units.is_empty() {
                asked += 1;
                continue;
            }
            self.wb.next_part.set((part + 1) % parts);
            asked = 0;
            self.wb.flushing.set(self.wb.flushing.get() + 1);
            let me = self.self_rc();
            self.cx.spawn(self.core, "write-back", async move {
                me.write_units_back(units, places, flows).await;
                me.wb.flushing.set(me.wb.flushing.get() - 1);
                me.maybe_flush();
                me.maybe_drain_pending();
            });
        }
    }

    /// Whether the write-back policy wants more of cache partition `part`'s dirty lines on
    /// their way to flash.
    fn flush_wanted(&self, part: usize) -> bool {
        let c = self.cache.borrow().part_counts(part);
        let lines =
            LineCounts { dirty: c.dirty as u64, writing: c.writing as u64, capacity: c.capacity as u64 };
        self.wb.policy.wanted(lines)
    }

    /// Programs claimed units (placed as `places` says, one each), a page at a time into the
    /// user stream (under FDP, each page of one handle's units into that handle's frontier),
    /// and moves their mapping there. The pages are queued to the FIL one after another and
    /// program in parallel; the mapping entries they need are loaded meanwhile (a
    /// translation-page read per miss, overlapped with the programs and with each other).
    /// Each page counts for the flow that dirtied most of its units (`flows`, one per unit).
    pub(crate) async fn write_units_back(
        &self,
        mut units: Vec<(nand::Lpn, UnitData)>,
        mut places: Vec<Placed>,
        mut flows: Vec<FlowTag>,
    ) {
        if units.is_empty() {
            return;
        }
        let upp = self.geo.units_per_page() as usize;
        if self.fdp.is_some() || self.sets.borrow().any() {
            // Group by placement (stable: each group keeps its LRU order).
            let mut all: Vec<_> = units.into_iter().zip(places).zip(flows).collect();
            all.sort_by_key(|((_, p), _)| *p);
            ((units, places), flows) = all.into_iter().unzip();
        }
        let spans = page_spans(&places, upp);
        let chunks = || spans.iter().map(|(r, _)| &units[r.clone()]);
        let pages = spans.len();
        // The CPU's cache, for the CMT lookups below (each at a random segment).
        for (lpn, _) in &units {
            self.map.prefetch(*lpn);
        }
        self.cx.compute(self.cfg.costs.write_back * pages as u64).await;
        self.enter(Point::Flash, None).await; // the programs are queued where flash is scheduled
        let mut programs = Vec::with_capacity(pages);
        for (range, place) in &spans {
            let lane = Lane { stream: Stream::User, handle: place.handle() };
            let page = self.alloc_page_in(lane, None, *place).await;
            // Queued before the next allocation can wait: pages of a block stay in order.
            let write = self.page_write(&units[range.clone()]);
            let flow = page_flow(&flows[range.clone()]);
            programs.push((page, self.start_program((Stream::User, flow), page, write).await));
        }
        for ((lpn, _), &flow) in units.iter().zip(&flows) {
            self.cmt_prefetch(*lpn, flow);
        }
        let mut done = Vec::with_capacity(pages);
        for ((page, rx), (range, place)) in programs.into_iter().zip(&spans) {
            let mut r = rx.await;
            // A failed program leaves its lines dirty below: they are written again later.
            self.settle_program(Stream::User, page, range.len() as u32, &mut r);
            let ok = r.status == FlashStatus::Ok;
            if ok && self.fdp.is_some() {
                self.fdp_written_back(*place, &units[range.clone()]);
            }
            done.push((page, ok));
        }
        // The updates below touch each unit's entry and its old copy's state, at random: fetch
        // them all at once first (the entries, then the old copies they name).
        for (lpn, _) in &units {
            self.map.prefetch(*lpn);
        }
        {
            let array = self.fil.array().borrow();
            for (lpn, _) in &units {
                if let Some(old) = self.map.get(*lpn) {
                    array.prefetch_unit(old);
                }
            }
        }
        for (&(page, ok), (range, _)) in done.iter().zip(&spans) {
            if !ok {
                continue;
            }
            for (slot, ((lpn, _), &flow)) in
                units[range.clone()].iter().zip(&flows[range.clone()]).enumerate()
            {
                let new = self.geo.unit_addr(page, slot as u32);
                if let Some(old) = self.map_update(*lpn, Some(new), flow, false).await {
                    self.invalidate(old);
                }
            }
        }
        let mut cache = self.cache.borrow_mut();
        for (&(_, ok), chunk) in done.iter().zip(chunks()) {
            for (lpn, _) in chunk {
                let i = cache.lookup(*lpn).expect("lines being written back stay cached");
                match (cache.line(i).state, ok) {
                    (LineState::Writing, true) => cache.written_back(i),
                    _ => cache.set_state(i, LineState::Dirty), // written again meanwhile, or the program failed
                }
            }
        }
        drop(cache);
        for (lpn, _) in &units {
            self.waits.notify(WaitKey::Line(*lpn));
        }
        self.wb.free_line.notify_all();
    }

    /// The page image of `units` (LPNs and tags in the OOB; bytes for payload stores, padded
    /// with zeroes).
    pub(crate) fn page_write(&self, units: &[(nand::Lpn, UnitData)]) -> PageWrite {
        let mut oob = Oob::empty(self.geo.units_per_page());
        for (slot, (lpn, data)) in units.iter().enumerate() {
            oob.set(slot, OobSlot { lpn: Some(*lpn), tag: data.tag() });
        }
        let data = self.payload.then(|| {
            // Each unit at its slot, zeroes after a short one and after the last (no page-wide
            // zeroing first: this runs for every page programmed).
            let mut page = Vec::with_capacity(self.geo.page_bytes() as usize);
            for (slot, (_, data)) in units.iter().enumerate() {
                if let UnitData::Bytes(b) = data {
                    page.extend_from_slice(b);
                }
                page.resize((slot + 1) * self.unit_bytes, 0);
            }
            page.resize(self.geo.page_bytes() as usize, 0);
            page.into_boxed_slice()
        });
        PageWrite { oob, data }
    }
}

/// The pages `places` (one per unit, grouped) pack into, `upp` units each at most: each page's
/// units (a range) and their placement. A page never holds two placements.
fn page_spans(places: &[Placed], upp: usize) -> Vec<(std::ops::Range<usize>, Placed)> {
    let mut spans = Vec::with_capacity(places.len().div_ceil(upp));
    let mut start = 0;
    while start < places.len() {
        let p = places[start];
        let run = places[start..].iter().take(upp).take_while(|&&q| q == p).count();
        spans.push((start..start + run, p));
        start += run;
    }
    spans
}

/// The flow a page of units dirtied by `flows` counts for: the one with the most units, the
/// first of them on a tie (a page holds 16 units at most, so counting is cheap).
fn page_flow(flows: &[FlowTag]) -> FlowTag {
    match flows {
        [] => return FlowTag::NONE,
        [f, rest @ ..] if rest.iter().all(|g| g == f) => return *f, // one flow's page: the common case
        _ => {}
    }
    let count = |f: FlowTag| flows.iter().filter(|&&g| g == f).count();
    let mut best = (0, FlowTag::NONE);
    for &f in flows {
        let n = count(f);
        if n > best.0 {
            best = (n, f);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_counts_for_the_flow_with_most_of_its_units() {
        let (a, b) = (FlowTag::of_flow(0), FlowTag::of_flow(1));
        assert_eq!(page_flow(&[a, b, b, a, b]), b);
        assert_eq!(page_flow(&[b, a, a, b]), b, "a tie goes to the first unit's flow");
        assert_eq!(page_flow(&[a]), a);
        assert_eq!(page_flow(&[]), FlowTag::NONE);
    }

    #[test]
    fn pages_never_mix_placements() {
        let (a, b) = (Placed::new(1, None), Placed::new(2, None));
        let spans = page_spans(&[a, a, a, a, a, b, b], 4);
        assert_eq!(spans, vec![(0..4, a), (4..5, a), (5..7, b)]);
        let same = page_spans(&[Placed::DEFAULT; 9], 4);
        assert_eq!(same.iter().map(|s| s.0.clone()).collect::<Vec<_>>(), [0..4, 4..8, 8..9]);
    }
}
