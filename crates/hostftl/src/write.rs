//! The write path, as the paper describes it: a write large enough to fill a super-page goes
//! as super-page writes (one page on every channel of a group, one command per controller
//! carrying all its pages' data); everything else as pipelined page writes (each 4 KiB sector
//! into the page being filled in the array's SRAM, the page programmed from there once full).
//!
//! ```text
//!   host write ─▶ units pending (host memory) ─┬─ super-page: Program {pages} per controller ─▶ programmed
//!                                              └─ pipelined: WriteSector x units ─▶ (page full) ProgramBuffered ─▶ programmed
//!   programmed: map the unit there unless rewritten or trimmed meanwhile; the old copy is stale
//! ```
//!
//! A pipelined write completes when its sectors are in SRAM (volatile, as a drive's write
//! cache); a FUA write or a flush programs the pages being filled, padded, and waits. A
//! super-page write completes when its pages are programmed.

use std::rc::Rc;

use firmware::config::WriteMode;
use firmware::fil::{PageWrite, TxnSource};
use firmware::ftl::{Stream, UnitData};
use firmware::trace::Phases;
use nand::{Lpn, Oob, OobSlot, PageIdx};
use raw::{RawCommand, RawCompletion, RawOp, RawStatus, Sector};

use crate::alloc::{OpenPage, Target};
use crate::ftl::{Critical, Inner, Pending};

impl Inner {
    /// Units a super-page holds: a page on every channel of a group.
    pub fn super_page_units(&self) -> usize {
        (self.geo.channels / self.cfg.groups * self.geo.units_per_page()) as usize
    }

    /// Writes whole units of one host command to `target`; returns when the write is
    /// acknowledged (see the module docs; with a host write buffer, once the units are in it).
    /// Adds the time spent to `ph`.
    pub async fn write_units(
        self: &Rc<Self>,
        units: Vec<(Lpn, UnitData)>,
        target: Target,
        fua: bool,
        ph: &mut Phases,
    ) {
        let stamped = self.stamp(units);
        self.cpu(self.cfg.costs.lookup * stamped.len() as u64).await;
        if self.cfg.write.buffer.bytes() > 0 {
            let kib = stamped.len() as u64 * self.geo.unit_bytes() as u64 / 1024;
            self.cpu(self.cfg.costs.copy_per_kib * kib).await;
            self.buffer_units(&stamped, target);
            if fua {
                self.flush().await;
            }
            return;
        }
        let super_pages = self.super_page_mode(stamped.len());
        self.place(&stamped, target, super_pages, fua, ph).await;
        if fua {
            self.wait_programmed(&stamped).await;
        }
    }

    /// Makes `units` the newest data of their LPNs, in host memory until they are on flash.
    /// Nothing awaits here: a read-modify-write merged them with what was current just now.
    fn stamp(&self, units: Vec<(Lpn, UnitData)>) -> Vec<(Lpn, u64)> {
        let stamped: Vec<(Lpn, u64)> = units
            .into_iter()
            .map(|(lpn, data)| {
                let born = self.next_seq();
                self.pending.borrow_mut().insert(lpn.0, Pending { born, data });
                (lpn, born)
            })
            .collect();
        self.stats.borrow_mut().host_units_written += stamped.len() as u64;
        self.account();
        stamped
    }

    /// Whether a write of `units` units goes as super-pages.
    pub fn super_page_mode(&self, units: usize) -> bool {
        let unit_bytes = self.geo.unit_bytes() as u64;
        let min =
            self.cfg.write.super_page_min.map_or(self.super_page_units() as u64 * unit_bytes, |b| b.bytes());
        match self.cfg.write.mode {
            WriteMode::Pipelined => false,
            WriteMode::SuperPage => true,
            WriteMode::Auto => units as u64 * unit_bytes >= min,
        }
    }

    /// Sends `stamped` units to the array: as super-pages (`super_pages`, while a whole one
    /// is left) and pipelined sectors; programs the page being filled if `fua`. Returns when
    /// the sectors are in SRAM and the super-pages programmed.
    pub async fn place(
        self: &Rc<Self>,
        stamped: &[(Lpn, u64)],
        target: Target,
        super_pages: bool,
        fua: bool,
        ph: &mut Phases,
    ) {
        let mut waiting: Vec<(WaitFor, std::pin::Pin<Box<dyn std::future::Future<Output = RawCompletion>>>)> =
            Vec::new();
        let mut rest: &[(Lpn, u64)] = stamped;
        let sp = self.super_page_units();
        if super_pages && !matches!(target, Target::Die(_)) {
            while rest.len() >= sp {
                let Some(pages) = self.placer.borrow_mut().super_page(target, &mut self.blocks.borrow_mut())
                else {
                    break;
                };
                for (cmd, written) in self.super_page_commands(&pages, &rest[..sp]) {
                    self.programs.set(self.programs.get() + 1);
                    waiting.push((WaitFor::Programs(written), Box::pin(self.raw.submit(cmd))));
                }
                rest = &rest[sp..];
            }
        }
        for &(lpn, born) in rest {
            // A unit rewritten (or trimmed) by another command since it was stamped is not
            // sent: the newer write carries the LPN. Checked right before placing, after any
            // wait for space, so that nothing runs between the check and the placement.
            let placed = loop {
                if !self.is_pending(lpn.0, born) {
                    break None;
                }
                let placed =
                    self.placer.borrow_mut().place_sector(target, lpn.0, born, &self.blocks.borrow());
                match placed {
                    Some(p) => break Some(p),
                    None => self.wait_for_space().await,
                }
            };
            let Some((die, buffer, slot, full)) = placed else { continue };
            let data = self.pending.borrow()[&lpn.0].data.clone();
            let sector = Sector {
                buffer,
                slot,
                lpn,
                tag: data.tag(),
                born,
                data: match data {
                    UnitData::Bytes(b) => Some(b),
                    UnitData::Tag(_) => None,
                },
            };
            let ppa = self.die_ppa(die);
            let cmd = RawCommand { op: RawOp::WriteSector(sector), source: TxnSource::User, ppas: vec![ppa] };
            waiting.push((WaitFor::Sector, Box::pin(self.raw.submit(cmd))));
            if let Some(open) = full {
                self.program_buffered(open);
            }
        }
        let sealed = if fua { self.placer.borrow_mut().seal(target) } else { None };
        if let Some(open) = sealed {
            self.program_buffered(open);
        }
        let commands = waiting.len() as u64;
        self.cpu(self.cfg.costs.command * commands).await;
        let mut critical = Critical::default();
        for (what, done) in waiting {
            let c = done.await;
            if let WaitFor::Programs(written) = what {
                self.programmed(written, &c, Stream::User).await;
            }
            critical.see(c);
        }
        critical.add_to(ph, self.cx.now());
        self.cpu(self.cfg.costs.completion * commands).await;
    }

    /// The Program commands of a super-page: its pages grouped by controller, each page filled
    /// with the next units of `units`. Returns each command with its (page, units) pairs.
    fn super_page_commands(&self, pages: &[PageIdx], units: &[(Lpn, u64)]) -> Vec<(RawCommand, Written)> {
        let upp = self.geo.units_per_page() as usize;
        let mut out: Vec<(usize, RawCommand, Written)> = Vec::new();
        for (i, &page) in pages.iter().enumerate() {
            let chunk: Vec<(u32, u64)> =
                units[i * upp..(i + 1) * upp].iter().map(|&(l, b)| (l.0, b)).collect();
            let write = self.page_write(&chunk);
            let ppa = self.geo.ppa(page);
            let c = self.raw.controller_of(ppa.channel as u32);
            let max = self.raw.config().max_ppas();
            match out.iter_mut().find(|(k, cmd, _)| *k == c && cmd.ppas.len() < max) {
                Some((_, cmd, written)) => {
                    cmd.ppas.push(ppa);
                    if let RawOp::Program { writes } = &mut cmd.op {
                        writes.push(write);
                    }
                    written.push((page, chunk));
                }
                None => out.push((
                    c,
                    RawCommand {
                        op: RawOp::Program { writes: vec![write] },
                        source: TxnSource::User,
                        ppas: vec![ppa],
                    },
                    vec![(page, chunk)],
                )),
            }
        }
        out.into_iter().map(|(_, cmd, w)| (cmd, w)).collect()
    }

    /// Whether the newest write of `lpn` not yet on flash is the one stamped `born`.
    fn is_pending(&self, lpn: u32, born: u64) -> bool {
        self.pending.borrow().get(&lpn).is_some_and(|p| p.born == born)
    }

    /// The page image of `units` (LPN, tag and first-write number per slot; the bytes for
    /// payload stores), from the pending data. A unit rewritten or trimmed since it was stamped
    /// (another command's write of the LPN got there first) is written as zeroes under its own
    /// sequence number: `programmed` invalidates it at once, and recovery prefers the newer
    /// write's higher number.
    pub fn page_write(&self, units: &[(u32, u64)]) -> PageWrite {
        let pending = self.pending.borrow();
        let upp = self.geo.units_per_page();
        let mut oob = Oob::empty(upp);
        let mut data = self.payload.then(|| vec![0u8; self.geo.page_bytes() as usize]);
        let ub = self.geo.unit_bytes() as usize;
        let mut stale = None; // made only for a page that has a rewritten unit
        for (slot, &(lpn, born)) in units.iter().enumerate() {
            let d = match pending.get(&lpn) {
                Some(p) if p.born == born => &p.data,
                _ => &*stale.get_or_insert_with(|| UnitData::zero(self.payload, ub)),
            };
            oob.set(slot, OobSlot { lpn: Some(Lpn(lpn)), tag: d.tag() });
            oob.set_born(slot, born);
            if let (Some(page), UnitData::Bytes(b)) = (data.as_mut(), d) {
                page[slot * ub..slot * ub + b.len()].copy_from_slice(b);
            }
        }
        PageWrite { oob, data: data.map(Vec::into_boxed_slice) }
    }

    /// A PPA on `die` (routes a sector write to the die's controller).
    fn die_ppa(&self, die: u32) -> nand::Ppa {
        self.geo.ppa(self.geo.page_of(self.geo.block_idx(nand::DieIdx(die), 0, 0), 0))
    }

    /// Programs a buffer the sectors filled (or part-filled) into the next page of its die,
    /// allocated now (waiting for GC if the die has no room), and maps its units when done.
    pub fn program_buffered(self: &Rc<Self>, open: OpenPage) {
        self.programs.set(self.programs.get() + 1);
        let me = self.clone();
        let page =
            self.placer.borrow_mut().frontier_page(open.die, Stream::User, &mut self.blocks.borrow_mut());
        let submit = |page: PageIdx| {
            let op = RawOp::ProgramBuffered { buffer: open.buffer };
            me.raw.submit(RawCommand { op, source: TxnSource::User, ppas: vec![me.geo.ppa(page)] })
        };
        let done = page.map(submit);
        let me = self.clone();
        self.cx.spawn(sim::CoreId::UNBOUND, "program buffered page", async move {
            let (page, c) = match (page, done) {
                (Some(p), Some(done)) => (p, done.await),
                _ => loop {
                    me.wait_for_space().await;
                    let p = me.placer.borrow_mut().frontier_page(
                        open.die,
                        Stream::User,
                        &mut me.blocks.borrow_mut(),
                    );
                    if let Some(p) = p {
                        let op = RawOp::ProgramBuffered { buffer: open.buffer };
                        let cmd = RawCommand { op, source: TxnSource::User, ppas: vec![me.geo.ppa(p)] };
                        break (p, me.raw.submit(cmd).await);
                    }
                },
            };
            me.programmed(vec![(page, open.units)], &c, Stream::User).await;
        });
    }

    /// Pages of `stream` were programmed (or failed): settle their blocks and map each unit
    /// there unless it was rewritten or trimmed meanwhile.
    pub async fn programmed(&self, written: Written, c: &RawCompletion, stream: Stream) {
        let ok = c.status == RawStatus::Ok;
        let mut units = 0u64;
        for (page, slots) in &written {
            self.blocks.borrow_mut().done_pending(self.geo.block_of(*page), 1);
            self.placer.borrow_mut().done(*page);
            for (slot, &(lpn, born)) in slots.iter().enumerate() {
                let new = self.geo.unit_addr(*page, slot as u32);
                let current = ok && self.pending.borrow().get(&lpn).is_some_and(|p| p.born == born);
                if current {
                    self.pending.borrow_mut().remove(&lpn);
                    if let Some(old) = self.remap(Lpn(lpn), Some(new)) {
                        self.invalidate(old);
                    }
                } else if ok {
                    self.invalidate(new); // rewritten or trimmed meanwhile
                }
            }
            units += slots.len() as u64;
            let mut st = self.stats.borrow_mut();
            st.pages_programmed[stream as usize] += 1;
            st.units_programmed[stream as usize] += slots.len() as u64;
        }
        if stream == Stream::User {
            self.programs.set(self.programs.get() - 1); // one per command, as counted at submission
        }
        self.account();
        self.programmed.notify_all();
        self.cpu(self.cfg.costs.update * units).await;
    }

    /// Waits until every unit of `units` is on flash (or was rewritten or trimmed since).
    async fn wait_programmed(&self, units: &[(Lpn, u64)]) {
        loop {
            let waiting = {
                let pending = self.pending.borrow();
                units.iter().any(|(l, b)| pending.get(&l.0).is_some_and(|p| p.born == *b))
            };
            if !waiting {
                return;
            }
            self.programmed.notified().await;
        }
    }

    /// Programs every page being filled and waits until every user program is done (and,
    /// with a host write buffer, until it is empty).
    pub async fn flush(self: &Rc<Self>) {
        self.drain_buffer().await;
        let sealed = self.placer.borrow_mut().seal_all();
        for open in sealed {
            self.program_buffered(open);
        }
        while self.programs.get() > 0 {
            self.programmed.notified().await;
        }
    }

    /// Deallocates `lpn`: it reads as zeroes afterwards.
    pub fn trim(&self, lpn: Lpn) {
        self.pending.borrow_mut().remove(&lpn.0);
        if let Some(old) = self.remap(lpn, None) {
            self.invalidate(old);
        }
        self.stats.borrow_mut().host_units_trimmed += 1;
        self.account();
    }
}

/// Pages programmed by one command, each with the (LPN, write sequence) of its slots.
pub(crate) type Written = Vec<(PageIdx, Vec<(u32, u64)>)>;

/// What a write waits for on a command.
enum WaitFor {
    /// A sector to reach SRAM.
    Sector,
    /// Super-page programs, to map their units.
    Programs(Written),
}
