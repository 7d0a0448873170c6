//! The untimed FTL primitives: programming units into the next page of a stream, collecting a
//! plane's garbage and writing translation pages, all straight into the array without
//! simulating time — with the timed FTL's allocation policy, write frontiers, GC thresholds,
//! victim policy and wear-aware free lists. Fills, mounts and checkpoints use them.

use nand::{DataTag, Lpn, Oob, OobSlot, PageIdx};

use crate::ftl::blocks::Stream;
use crate::ftl::config::TRANSLATION_LPN_BASE;
use crate::ftl::data::UnitData;
use crate::ftl::gc::PageUnits;
use crate::ftl::precondition::PreconditionError;
use crate::ftl::state::FtlInner;

/// Packs written units into pages, as the cache's write-back does: each unit in the NVM set a
/// fill registered for its range (a page holds one set's units).
pub(crate) struct Writer<'a> {
    ftl: &'a FtlInner,
    /// Units waiting for a page, per NVM set (set 0 first; a few sets at most).
    pending: Vec<(u8, Vec<Lpn>)>,
    /// What every preconditioned unit holds: zeroes, or (metadata-only) tag 0.
    tag: DataTag,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(ftl: &'a FtlInner) -> Self {
        let tag = UnitData::zero(ftl.payload, ftl.unit_bytes).tag();
        Writer { ftl, pending: vec![(0, Vec::with_capacity(16))], tag }
    }

    pub(crate) fn push(&mut self, lpn: Lpn) -> Result<(), PreconditionError> {
        let set = if self.pending.len() > 1 || self.ftl.sets.borrow().any() {
            self.ftl.sets.borrow().fill_set(lpn)
        } else {
            0
        };
        let k = match self.pending.iter().position(|(s, _)| *s == set) {
            Some(k) => k,
            None => {
                self.pending.push((set, Vec::with_capacity(16)));
                self.pending.len() - 1
            }
        };
        if self.pending[k].1.contains(&lpn) {
            self.flush_one(k)?; // a unit written twice in one page: the second copy goes in the next
        }
        self.pending[k].1.push(lpn);
        self.ftl.stats.borrow_mut().host_units_written += 1;
        if self.pending[k].1.len() == self.ftl.geo.units_per_page() as usize {
            self.flush_one(k)?;
        }
        Ok(())
    }

    pub(crate) fn flush(&mut self) -> Result<(), PreconditionError> {
        for k in 0..self.pending.len() {
            self.flush_one(k)?;
        }
        Ok(())
    }

    fn flush_one(&mut self, k: usize) -> Result<(), PreconditionError> {
        let (set, pending) = &mut self.pending[k];
        if !pending.is_empty() {
            let units: Vec<FastUnit<'_>> =
                pending.drain(..).map(|lpn| FastUnit { lpn, tag: self.tag, born: 0, bytes: None }).collect();
            self.ftl.fast_write(Stream::User, None, &units, FastGc::AsTimed, *set)?;
        }
        Ok(())
    }
}

impl FtlInner {
    /// Programs `units` into the next page of `stream` and moves their mapping there. Old
    /// copies go stale in the array directly: [`invalidate`](Self::invalidate) would start
    /// timed GC.
    fn fast_write(
        &self,
        stream: Stream,
        plane: Option<u32>,
        units: &[FastUnit<'_>],
        gc: FastGc,
        set: u8,
    ) -> Result<(), PreconditionError> {
        let page = self.fast_page(stream, plane, gc, set)?;
        let mut oob = Oob::empty(self.geo.units_per_page());
        for (s, u) in units.iter().enumerate() {
            oob.set(s, OobSlot { lpn: Some(u.lpn), tag: u.tag });
            oob.set_born(s, u.born);
        }
        let data = self.payload.then(|| {
            let mut page = vec![0u8; self.geo.page_bytes() as usize];
            for (s, u) in units.iter().enumerate() {
                if let Some(b) = u.bytes {
                    page[s * self.unit_bytes..s * self.unit_bytes + b.len()].copy_from_slice(b);
                }
            }
            page
        });
        self.fil.array().borrow_mut().program(page, &oob, data.as_deref())?;
        self.blocks.borrow_mut().done_pending(self.geo.block_of(page), 1);
        for (s, u) in units.iter().enumerate() {
            let new = self.geo.unit_addr(page, s as u32);
            if u.lpn.0 >= TRANSLATION_LPN_BASE {
                let old = self
                    .map
                    .dftl
                    .as_ref()
                    .expect("translation pages under DFTL")
                    .borrow_mut()
                    .relocate(u.lpn.0 - TRANSLATION_LPN_BASE, new);
                if let Some(old) = old {
                    self.fil.array().borrow_mut().invalidate(old);
                }
            } else {
                if let Some(old) = self.map.l2p.borrow_mut().set(u.lpn, Some(new)) {
                    self.fil.array().borrow_mut().invalidate(old);
                }
                if let Some(d) = &self.map.dftl {
                    // Its translation page is behind the map now (written again by
                    // `write_all_translation_pages`).
                    let mut d = d.borrow_mut();
                    let t = d.tpage_of_segment(d.segment_of(u.lpn.0));
                    d.set_pending(t);
                }
            }
        }
        let mut st = self.stats.borrow_mut();
        st.pages_programmed[stream as usize] += 1;
        st.units_programmed[stream as usize] += units.len() as u64;
        Ok(())
    }

    /// The next page of `stream` (host data: in NVM set `set`), collecting garbage where `gc`
    /// says.
    fn fast_page(
        &self,
        stream: Stream,
        plane: Option<u32>,
        gc: FastGc,
        set: u8,
    ) -> Result<PageIdx, PreconditionError> {
        let hard = self.cfg.gc.hard_free;
        for _ in 0..2 {
            let got = {
                let mut alloc = self.alloc.borrow_mut();
                let mut blocks = self.blocks.borrow_mut();
                let chosen = match (stream, plane) {
                    (_, Some(p)) => Some(p),
                    (Stream::User, None) if set != 0 => {
                        let sets = self.sets.borrow();
                        alloc.user_plane_in(0, set, &blocks, hard, &|_| 0, &|p| sets.admits(set, p))
                    }
                    // Beside confined ranges, the rest of the fill goes where there is most
                    // room, so that it does not crowd the confined planes out.
                    (Stream::User, None) if self.sets.borrow().has_fill() => (0..blocks.planes())
                        .filter(|&p| alloc.has_room(Stream::User, p, &blocks, hard))
                        .max_by_key(|&p| blocks.free_count(p)),
                    (Stream::User, None) => alloc.user_plane(&blocks, hard, &|_| 0, &|_| true),
                    (_, None) => alloc.mapping_plane(&blocks),
                };
                chosen.and_then(|p| alloc.page_in(stream, p, &mut blocks, hard).map(|page| (p, page)))
            };
            if let Some((p, page)) = got {
                if stream != Stream::Gc && gc == FastGc::AsTimed {
                    self.fast_gc(p)?;
                }
                return Ok(page);
            }
            let planes = self.blocks.borrow().planes();
            for p in 0..planes {
                self.fast_gc(p)?;
            }
        }
        if set != 0 {
            return Err(PreconditionError::TooFull(format!(
                "a confined job's planes (NVM set {set}) cannot hold its region beside the rest of the fill; confine it to more planes or give it a smaller size"
            )));
        }
        Err(PreconditionError::TooFull(format!("no free {stream:?} page even after GC")))
    }

    /// Collects `plane` until it has its background threshold of free blocks. Units move as a
    /// timed GC moves them: with their tags, their first-write sequence numbers and (payload
    /// stores) their bytes; translation pages one per page. Stops early when a collection
    /// programs a whole block's worth of pages, since it gained nothing (a nearly full victim,
    /// or translation pages moving one per page): collecting on would never end.
    fn fast_gc(&self, plane: u32) -> Result<(), PreconditionError> {
        self.fast_gc_until(plane, self.cfg.gc.soft(self.geo.blocks))
    }

    /// [`fast_gc`](Self::fast_gc) until `plane` has `target` free blocks.
    fn fast_gc_until(&self, plane: u32, target: u32) -> Result<(), PreconditionError> {
        let upp = self.geo.units_per_page();
        while self.blocks.borrow().free_count(plane) < target {
            let Some(v) = self.pick_victim(plane) else { return Ok(()) };
            self.blocks.borrow_mut().set_victim(v);
            // Every page of the victim with a valid unit: its OOB, its data and which slots
            // hold valid units.
            let mut pages: Vec<(Oob, Option<Vec<u8>>, PageUnits)> = Vec::new();
            for (page, valid) in self.valid_units_by_page(v) {
                let mut data = self.payload.then(|| vec![0u8; self.geo.page_bytes() as usize]);
                let oob = self.fil.array().borrow_mut().read(page, data.as_deref_mut())?;
                pages.push((oob, data, valid));
            }
            let (mut moved, mut written) = (0, 0);
            let mut pending: Vec<FastUnit<'_>> = Vec::with_capacity(upp as usize);
            for (oob, data, valid) in &pages {
                for &(s, lpn) in valid {
                    let s = s as usize;
                    let (tag, born) = (oob.tag(s), oob.born(s));
                    if lpn.0 >= TRANSLATION_LPN_BASE {
                        // A translation page's bytes fill its page: it moves alone, to slot 0.
                        let bytes = data.as_deref();
                        self.fast_write(
                            Stream::Gc,
                            Some(plane),
                            &[FastUnit { lpn, tag, born, bytes }],
                            FastGc::WhenFull,
                            0,
                        )?;
                        written += 1;
                    } else {
                        let bytes = data.as_ref().map(|d| &d[s * self.unit_bytes..(s + 1) * self.unit_bytes]);
                        pending.push(FastUnit { lpn, tag, born, bytes });
                        if pending.len() == upp as usize {
                            self.fast_write(Stream::Gc, Some(plane), &pending, FastGc::WhenFull, 0)?;
                            pending.clear();
                            written += 1;
                        }
                    }
                    moved += 1;
                }
            }
            if !pending.is_empty() {
                self.fast_write(Stream::Gc, Some(plane), &pending, FastGc::WhenFull, 0)?;
                written += 1;
            }
            self.stats.borrow_mut().gc_units_moved += moved;
            self.stats.borrow_mut().gc_invocations += 1;
            self.fil.array().borrow_mut().erase(v)?;
            let erase_count = self.fil.array().borrow().block(v).erase_count;
            self.blocks.borrow_mut().release(v, erase_count);
            self.stats.borrow_mut().blocks_erased += 1;
            if written >= self.geo.pages {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Writes every translation page (DFTL) from the map in DRAM, untimed, and marks every
    /// cached segment clean. Returns the pages written.
    ///
    /// GC moving data units puts their translation pages behind the map again, and a
    /// translation page fills a page of its own: on a device whose victims are nearly full,
    /// each rewrite would cost more pages than the collection that forced it freed, and
    /// rewriting until every page is current would never end. So the space comes first: GC runs
    /// before any page is written, far enough that each plane keeps its GC threshold of free
    /// blocks after taking its share, and the writes then take free pages without collecting.
    pub(crate) fn write_all_translation_pages(&self) -> Result<u32, PreconditionError> {
        let Some(d) = &self.map.dftl else { return Ok(0) };
        let tpages = d.borrow().tpages();
        // Translation pages take the planes in turn: each plane needs room for its share on
        // top of its GC threshold, or the timed run would start with every plane below the
        // threshold and spend its first simulated seconds collecting what the pages took.
        let planes = self.blocks.borrow().planes();
        let share = tpages.div_ceil(planes).div_ceil(self.geo.pages);
        let target = (self.cfg.gc.soft(self.geo.blocks) + share + 1).min(self.geo.blocks);
        for p in 0..planes {
            self.fast_gc_until(p, target)?;
        }
        let room = self.mapping_room();
        if room < tpages as u64 {
            return Err(PreconditionError::TooFull(format!(
                "its {tpages} translation pages need as many free pages, but GC leaves room for {room}"
            )));
        }
        for t in 0..tpages {
            self.write_tpage_now(t)?;
        }
        let behind = d.borrow().pending_pages();
        assert_eq!(behind, 0, "{behind} translation pages fell behind the map without GC");
        Ok(tpages)
    }

    /// Pages the mapping stream can take without GC: free blocks beyond the one each plane
    /// keeps for it, whole (an open mapping block's rest is not counted).
    fn mapping_room(&self) -> u64 {
        let blocks = self.blocks.borrow();
        let keep = crate::ftl::alloc::keep(Stream::Mapping, self.cfg.gc.hard_free);
        let free: u64 = (0..blocks.planes()).map(|p| blocks.free_count(p).saturating_sub(keep) as u64).sum();
        free * self.geo.pages as u64
    }

    /// Writes translation page `t` from the map in DRAM, untimed.
    fn write_tpage_now(&self, t: u32) -> Result<(), PreconditionError> {
        let d = self.map.dftl.as_ref().expect("translation pages under DFTL");
        let per = d.borrow().entries_per_tpage as usize;
        {
            let mut dm = d.borrow_mut();
            let segs = dm.segments_of(t);
            dm.cmt.mark_clean_all(segs);
            dm.clear_pending(t);
        }
        let raw = self.map.l2p.borrow().raw(t as usize * per..(t as usize + 1) * per).to_vec();
        let bytes = self.payload.then(|| self.tpage_bytes(&raw));
        let unit = FastUnit {
            lpn: Lpn(TRANSLATION_LPN_BASE + t),
            tag: DataTag(t as u16),
            born: 0,
            bytes: bytes.as_deref(),
        };
        self.fast_write(Stream::Mapping, None, &[unit], FastGc::WhenFull, 0)?;
        if let Some(on_flash) = d.borrow_mut().on_flash.as_mut() {
            on_flash[t as usize * per..t as usize * per + raw.len()].copy_from_slice(&raw);
        }
        Ok(())
    }
}

/// When the untimed path collects garbage.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum FastGc {
    /// Whenever a plane falls below its background threshold, as the timed FTL would
    /// (preconditioning: the aged state should look like one the timed FTL left).
    AsTimed,
    /// Only when no page is left (mounting, checkpoints: timed GC takes over afterwards).
    WhenFull,
}

/// One unit the untimed path programs, with what a timed program would record for it.
struct FastUnit<'a> {
    lpn: Lpn,
    tag: DataTag,
    /// The sequence number of the data's first program (0: this one).
    born: u64,
    /// Its bytes (payload stores), placed from the start of its slot; `None`: zeroes.
    bytes: Option<&'a [u8]>,
}
