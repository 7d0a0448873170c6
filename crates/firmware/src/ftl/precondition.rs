//! Preconditioning: ageing a fresh device quickly. The fast path replays what the FTL would do
//! — the same allocation policy, write frontiers, GC thresholds, victim policy and wear-aware
//! free lists — but programs and erases the array directly, without simulating any time. It
//! ends with every translation page written (the CMT empty and clean) and the FTL's counters
//! reset, so a run measures only itself.

use std::str::FromStr;

use nand::{Lpn, Oob, OobSlot, PageIdx};
use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::ftl::blocks::Stream;
use crate::ftl::config::TRANSLATION_LPN_BASE;
use crate::ftl::gc::victim;
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
    /// If the device has served any I/O already (precondition fresh devices only).
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
        i.write_all_translation_pages();
        *i.stats.borrow_mut() = FtlStats::default();
        progress(total, total);
    }
}

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
}

impl<'a> Writer<'a> {
    fn new(ftl: &'a FtlInner) -> Self {
        Writer { ftl, pending: Vec::with_capacity(16) }
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
            let units = std::mem::take(&mut self.pending);
            self.ftl.fast_write(Stream::User, None, &units);
        }
    }
}

impl FtlInner {
    /// Programs `lpns` into the next page of `stream` and moves their mapping there.
    fn fast_write(&self, stream: Stream, plane: Option<u32>, lpns: &[Lpn]) {
        let page = self.fast_page(stream, plane);
        let mut oob = Oob::empty(self.geo.units_per_page());
        for (s, &lpn) in lpns.iter().enumerate() {
            oob.set(s, OobSlot { lpn: Some(lpn), tag: nand::DataTag(0) });
        }
        self.fil
            .array()
            .borrow_mut()
            .program(page, &oob, None)
            .expect("preconditioning writes only array state");
        self.blocks.borrow_mut().done_pending(self.geo.block_of(page));
        for (s, &lpn) in lpns.iter().enumerate() {
            let new = self.geo.unit_addr(page, s as u32);
            if lpn.0 >= TRANSLATION_LPN_BASE {
                let old = self
                    .dftl
                    .as_ref()
                    .expect("translation pages under DFTL")
                    .borrow_mut()
                    .relocate(lpn.0 - TRANSLATION_LPN_BASE, new);
                if let Some(old) = old {
                    self.invalidate(old);
                }
            } else if let Some(old) = self.l2p.borrow_mut().set(lpn, Some(new)) {
                self.invalidate(old);
            }
        }
        let mut st = self.stats.borrow_mut();
        st.pages_programmed[stream as usize] += 1;
        st.units_programmed[stream as usize] += lpns.len() as u64;
    }

    /// The next page of `stream`, collecting garbage first where a plane runs short.
    fn fast_page(&self, stream: Stream, plane: Option<u32>) -> PageIdx {
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
                if stream != Stream::Gc {
                    self.fast_gc(p);
                }
                return page;
            }
            for p in 0..self.blocks.borrow().planes() {
                self.fast_gc(p);
            }
        }
        panic!("preconditioning found no free page even after GC (the configuration leaves no spare space)");
    }

    /// Collects `plane` until it has its background threshold of free blocks.
    fn fast_gc(&self, plane: u32) {
        let soft = self.cfg.gc.soft(self.geo.blocks);
        while self.blocks.borrow().free_count(plane) < soft {
            let v = {
                let array = self.fil.array().borrow();
                victim::pick(
                    self.cfg.gc.victim,
                    plane,
                    &self.blocks.borrow(),
                    &array,
                    &mut self.rng.borrow_mut(),
                )
            };
            let Some(v) = v else { return };
            self.blocks.borrow_mut().set_victim(v);
            let valid: Vec<Lpn> = {
                let array = self.fil.array().borrow();
                (0..array.block(v).write_ptr)
                    .flat_map(|p| {
                        let page = self.geo.page_of(v, p);
                        (0..self.geo.units_per_page()).map(move |s| self.geo.unit_addr(page, s))
                    })
                    .filter_map(|u| match array.unit(u) {
                        nand::UnitState::Valid(lpn) => Some(lpn),
                        _ => None,
                    })
                    .collect()
            };
            for chunk in valid.chunks(self.geo.units_per_page() as usize) {
                self.fast_write(Stream::Gc, Some(plane), chunk);
            }
            self.stats.borrow_mut().gc_units_moved += valid.len() as u64;
            self.stats.borrow_mut().gc_invocations += 1;
            self.fil.array().borrow_mut().erase(v).expect("preconditioning erases only array state");
            let erase_count = self.fil.array().borrow().block(v).erase_count;
            self.blocks.borrow_mut().release(v, erase_count);
            self.stats.borrow_mut().blocks_erased += 1;
        }
    }

    /// Writes every translation page once (DFTL) from the map in DRAM, untimed, and marks every
    /// cached segment clean. Returns the pages written.
    pub(crate) fn write_all_translation_pages(&self) -> u32 {
        let Some(d) = &self.dftl else { return 0 };
        let tpages = d.borrow().tpages();
        for t in 0..tpages {
            let mut dm = d.borrow_mut();
            for seg in dm.segments_of(t) {
                dm.cmt.mark_clean(seg);
            }
            dm.clear_pending(t);
            drop(dm);
            self.fast_write(Stream::Mapping, None, &[Lpn(TRANSLATION_LPN_BASE + t)]);
            let per = d.borrow().entries_per_tpage as usize;
            let l2p = self.l2p.borrow();
            let raw = l2p.raw(t as usize * per..(t as usize + 1) * per);
            if let Some(on_flash) = d.borrow_mut().on_flash.as_mut() {
                on_flash[t as usize * per..t as usize * per + raw.len()].copy_from_slice(raw);
            }
        }
        tpages
    }
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
