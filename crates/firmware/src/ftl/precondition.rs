//! Preconditioning: ageing a fresh device quickly. The fast path replays what the FTL would do
//! — the same allocation policy, write frontiers, GC thresholds, victim policy and wear-aware
//! free lists — but programs and erases the array directly, without simulating any time. It
//! ends with every translation page written (the CMT empty and clean) and the FTL's counters
//! reset, so a run measures only itself.

use std::io;
use std::str::FromStr;

use nand::{DataTag, Lpn, Oob, OobSlot, PageIdx};
use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::ftl::blocks::Stream;
use crate::ftl::config::TRANSLATION_LPN_BASE;
use crate::ftl::data::UnitData;
use crate::ftl::state::{Ftl, FtlInner};
use crate::ftl::stats::FtlStats;

/// How to age a device before a run.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Precondition {
    /// Every logical unit written once, in LBA order.
    SeqFill,
    /// Every logical unit written once, in a random order.
    RandomFill,
    /// A random fill, then uniform random 4 KiB overwrites of `overwrites` times the logical
    /// capacity, with GC running as it would: the device in GC steady state.
    SteadyState {
        /// Overwrites, in multiples of the logical capacity. Default: 2.
        overwrites: f64,
    },
}

impl FromStr for Precondition {
    type Err = String;

    /// `seq-fill`, `random-fill`, `steady-state` or `steady-state:N` (N overwrites).
    fn from_str(s: &str) -> Result<Self, String> {
        match s.split_once(':') {
            None if s == "seq-fill" => Ok(Precondition::SeqFill),
            None if s == "random-fill" => Ok(Precondition::RandomFill),
            None if s == "steady-state" => Ok(Precondition::SteadyState { overwrites: 2.0 }),
            Some(("steady-state", n)) => match n.parse::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 && v <= 100.0 => {
                    Ok(Precondition::SteadyState { overwrites: v })
                }
                _ => Err(format!("steady-state:N needs N between 0 and 100 overwrites (got {n:?})")),
            },
            _ => {
                Err(format!("unknown precondition {s:?}: expected seq-fill, random-fill or steady-state[:N]"))
            }
        }
    }
}

impl Ftl {
    /// Ages this (fresh) device as `kind` says, without simulating time. `progress(done, total)`
    /// reports units written.
    ///
    /// # Panics
    /// If the device has served any I/O already (precondition fresh devices only), or if the
    /// page store fails (preconditioning is meant for in-memory stores).
    pub fn precondition(&self, kind: Precondition, progress: &mut dyn FnMut(u64, u64)) {
        let i = &*self.inner;
        assert_eq!(i.stats.borrow().host_units_written, 0, "precondition a fresh device");
        let logical = i.logical as u64;
        let overwrites = match kind {
            Precondition::SteadyState { overwrites } => (overwrites * logical as f64) as u64,
            _ => 0,
        };
        let total = logical + overwrites;
        let mut writer = Writer::new(i);
        let order = Order::new(logical, kind == Precondition::SeqFill, &mut i.rng.borrow_mut());
        for k in 0..logical {
            writer.push(Lpn(order.at(k) as u32));
            if k % (1 << 20) == 0 {
                progress(k, total);
            }
        }
        for k in 0..overwrites {
            let lpn = i.rng.borrow_mut().random_range(0..i.logical);
            writer.push(Lpn(lpn));
            if k % (1 << 20) == 0 {
                progress(logical + k, total);
            }
        }
        writer.flush();
        i.write_all_translation_pages(FastGc::AsTimed)
            .unwrap_or_else(|e| panic!("{PRECONDITION_FAILED}: {e}"));
        *i.stats.borrow_mut() = FtlStats::default();
        progress(total, total);
    }
}

/// What preconditioning panics with when the page store fails or the device is too full.
const PRECONDITION_FAILED: &str = "preconditioning failed";

/// A permutation of `0..n`: the identity, or `(a * k + b) mod n` with `a` coprime to `n`
/// (a cheap random order that needs no table).
struct Order {
    n: u64,
    a: u64,
    b: u64,
}

impl Order {
    fn new(n: u64, sequential: bool, rng: &mut sim::SimRng) -> Self {
        if sequential || n < 2 {
            return Order { n, a: 1, b: 0 };
        }
        let mut a = rng.random_range(n / 3..n) | 1;
        while gcd(a, n) != 1 {
            a += 2;
        }
        Order { n, a, b: rng.random_range(0..n) }
    }

    fn at(&self, k: u64) -> u64 {
        ((self.a as u128 * k as u128 + self.b as u128) % self.n as u128) as u64
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Packs written units into pages, as the cache's write-back does.
struct Writer<'a> {
    ftl: &'a FtlInner,
    pending: Vec<Lpn>,
    /// What every preconditioned unit holds: zeroes, or (metadata-only) tag 0.
    tag: DataTag,
}

impl<'a> Writer<'a> {
    fn new(ftl: &'a FtlInner) -> Self {
        let tag = UnitData::zero(ftl.payload, ftl.unit_bytes).tag();
        Writer { ftl, pending: Vec::with_capacity(16), tag }
    }

    fn push(&mut self, lpn: Lpn) {
        if self.pending.contains(&lpn) {
            self.flush(); // a unit written twice in one page: the second copy goes in the next
        }
        self.pending.push(lpn);
        if self.pending.len() == self.ftl.geo.units_per_page() as usize {
            self.flush();
        }
        self.ftl.stats.borrow_mut().host_units_written += 1;
    }

    fn flush(&mut self) {
        if !self.pending.is_empty() {
            let units: Vec<FastUnit<'_>> = self
                .pending
                .drain(..)
                .map(|lpn| FastUnit { lpn, tag: self.tag, born: 0, bytes: None })
                .collect();
            self.ftl
                .fast_write(Stream::User, None, &units, FastGc::AsTimed)
                .unwrap_or_else(|e| panic!("{PRECONDITION_FAILED}: {e}"));
        }
    }
}

impl FtlInner {
    /// Programs `units` into the next page of `stream` and moves their mapping there.
    fn fast_write(
        &self,
        stream: Stream,
        plane: Option<u32>,
        units: &[FastUnit<'_>],
        gc: FastGc,
    ) -> io::Result<()> {
        let page = self.fast_page(stream, plane, gc)?;
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
        self.blocks.borrow_mut().done_pending(self.geo.block_of(page));
        for (s, u) in units.iter().enumerate() {
            let new = self.geo.unit_addr(page, s as u32);
            if u.lpn.0 >= TRANSLATION_LPN_BASE {
                let old = self
                    .dftl
                    .as_ref()
                    .expect("translation pages under DFTL")
                    .borrow_mut()
                    .relocate(u.lpn.0 - TRANSLATION_LPN_BASE, new);
                if let Some(old) = old {
                    self.invalidate(old);
                }
            } else {
                if let Some(old) = self.l2p.borrow_mut().set(u.lpn, Some(new)) {
                    self.invalidate(old);
                }
                if let Some(d) = &self.dftl {
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

    /// The next page of `stream`, collecting garbage where `gc` says.
    fn fast_page(&self, stream: Stream, plane: Option<u32>, gc: FastGc) -> io::Result<PageIdx> {
        let hard = self.cfg.gc.hard_free;
        for _ in 0..2 {
            let got = {
                let mut alloc = self.alloc.borrow_mut();
                let mut blocks = self.blocks.borrow_mut();
                let chosen = match (stream, plane) {
                    (_, Some(p)) => Some(p),
                    (Stream::User, None) => alloc.user_plane(&blocks, hard, &|_| 0),
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
        Err(io::Error::new(
            io::ErrorKind::StorageFull,
            format!("no free {stream:?} page even after GC (the device is too full to rewrite its mapping)"),
        ))
    }

    /// Collects `plane` until it has its background threshold of free blocks. Units move as a
    /// timed GC moves them: with their tags, their first-write sequence numbers and (payload
    /// stores) their bytes; translation pages one per page. Stops early when a collection
    /// programs a whole block's worth of pages, since it gained nothing (a nearly full victim,
    /// or translation pages moving one per page): collecting on would never end.
    fn fast_gc(&self, plane: u32) -> io::Result<()> {
        let soft = self.cfg.gc.soft(self.geo.blocks);
        let upp = self.geo.units_per_page();
        while self.blocks.borrow().free_count(plane) < soft {
            let Some(v) = self.pick_victim(plane) else { return Ok(()) };
            self.blocks.borrow_mut().set_victim(v);
            // Every page of the victim with a valid unit: its OOB, its data and which slots
            // hold valid units.
            let mut pages: Vec<(Oob, Option<Vec<u8>>, Vec<(u32, Lpn)>)> = Vec::new();
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
                        )?;
                        written += 1;
                    } else {
                        let bytes = data.as_ref().map(|d| &d[s * self.unit_bytes..(s + 1) * self.unit_bytes]);
                        pending.push(FastUnit { lpn, tag, born, bytes });
                        if pending.len() == upp as usize {
                            self.fast_write(Stream::Gc, Some(plane), &pending, FastGc::WhenFull)?;
                            pending.clear();
                            written += 1;
                        }
                    }
                    moved += 1;
                }
            }
            if !pending.is_empty() {
                self.fast_write(Stream::Gc, Some(plane), &pending, FastGc::WhenFull)?;
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
    /// cached segment clean; then again each page that GC made room for the others by moving
    /// some of its units. Returns the pages written.
    pub(crate) fn write_all_translation_pages(&self, gc: FastGc) -> io::Result<u32> {
        let Some(d) = &self.dftl else { return Ok(0) };
        let tpages = d.borrow().tpages();
        for t in 0..tpages {
            self.write_tpage_now(t, gc)?;
        }
        let mut written = tpages;
        loop {
            let next = d.borrow().next_pending(0);
            let Some(t) = next else { break };
            if written >= 4 * tpages {
                return Err(io::Error::other(
                    "the translation pages did not settle: GC kept moving their units",
                ));
            }
            self.write_tpage_now(t, gc)?;
            written += 1;
        }
        Ok(written)
    }

    /// Writes translation page `t` from the map in DRAM, untimed.
    fn write_tpage_now(&self, t: u32, gc: FastGc) -> io::Result<()> {
        let d = self.dftl.as_ref().expect("translation pages under DFTL");
        let per = d.borrow().entries_per_tpage as usize;
        {
            let mut dm = d.borrow_mut();
            for seg in dm.segments_of(t) {
                dm.cmt.mark_clean(seg);
            }
            dm.clear_pending(t);
        }
        let raw = self.l2p.borrow().raw(t as usize * per..(t as usize + 1) * per).to_vec();
        let bytes = self.payload.then(|| self.tpage_bytes(&raw));
        let unit = FastUnit {
            lpn: Lpn(TRANSLATION_LPN_BASE + t),
            tag: DataTag(t as u16),
            born: 0,
            bytes: bytes.as_deref(),
        };
        self.fast_write(Stream::Mapping, None, &[unit], gc)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn random_order_is_a_permutation() {
        let mut rng = sim::SimRng::seed_from_u64(3);
        for n in [1u64, 2, 10, 97, 1000, 4096] {
            let o = Order::new(n, false, &mut rng);
            let mut seen = vec![false; n as usize];
            for k in 0..n {
                let v = o.at(k) as usize;
                assert!(!seen[v], "n={n}: {v} twice");
                seen[v] = true;
            }
        }
    }

    #[test]
    fn parses_kinds() {
        assert_eq!("seq-fill".parse(), Ok(Precondition::SeqFill));
        assert_eq!("steady-state:3.5".parse(), Ok(Precondition::SteadyState { overwrites: 3.5 }));
        assert!("steady-state:-1".parse::<Precondition>().is_err());
        assert!("aged".parse::<Precondition>().is_err());
    }
}
