//! [`RawArray`]: the flash array controllers serving raw commands over the FIL.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::rc::Rc;

use firmware::config::ArrayConfig;
use firmware::fil::{Fil, FlashRequest, FlashStatus, PageWrite, TxnResult};
use firmware::hil::{Dir, Link, LinkConfig};
use nand::{Geometry, Oob, OobSlot, PageIdx, Ppa};
use rustc_hash::FxHashMap;
use sim::sync::{Notify, oneshot};
use sim::{CoreId, CoreSpec, Cx, Sim, SimDuration, SimTime};

use crate::command::{RawCommand, RawCompletion, RawOp, RawStatus};
use crate::pipe::Pipe;
use crate::sram::Sram;

/// What the array controllers did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawStats {
    /// Commands completed by kind: read, program, sector, program-buffered, erase.
    pub commands: [u64; 5],
    /// Pages named by completed commands.
    pub pages: u64,
    /// Total time commands waited for a command slot.
    pub slot_wait: SimDuration,
    /// Most SRAM page buffers in use at once.
    pub peak_sram_pages: u32,
    /// Commands rejected as malformed.
    pub invalid: u64,
}

fn kind(op: &RawOp) -> usize {
    match op {
        RawOp::Read { .. } => 0,
        RawOp::Program { .. } => 1,
        RawOp::WriteSector(_) => 2,
        RawOp::ProgramBuffered { .. } => 3,
        RawOp::Erase => 4,
    }
}

/// A command waiting for a slot of its controller.
struct Queued {
    cmd: RawCommand,
    reply: oneshot::Sender<RawCompletion>,
    submitted: SimTime,
    /// SRAM page buffers it needs.
    sram: u32,
}

/// One flash array controller: a FIFO of commands served by `slots` workers, and its command
/// logic (a pipe charged to its core).
struct Controller {
    queue: RefCell<VecDeque<Queued>>,
    work: Notify,
    core: CoreId,
    logic: Pipe,
}

/// A page buffer the sector writes are filling.
struct Buffer {
    oob: Oob,
    data: Option<Vec<u8>>,
}

/// The raw array: controllers, SRAM, DMA engine and host link over the FIL.
pub struct RawArray {
    cx: Cx,
    cfg: ArrayConfig,
    fil: Fil,
    geo: Geometry,
    link: Link,
    irq: SimDuration,
    controllers: Vec<Controller>,
    sram: Sram,
    dma: Pipe,
    buffers: RefCell<FxHashMap<u64, Buffer>>,
    stats: RefCell<RawStats>,
}

impl RawArray {
    /// Starts the controllers (their cores join `sim`) over `fil`, behind a host link `link`
    /// whose completions reach the host `irq` after they are posted. `cfg` must be validated
    /// for the FIL's geometry.
    pub fn start(
        sim: &Sim,
        cfg: &ArrayConfig,
        fil: Fil,
        link: &LinkConfig,
        irq: SimDuration,
    ) -> Rc<RawArray> {
        let geo = fil.geometry().clone();
        let cx = sim.cx();
        let n = geo.channels / cfg.channels_per_controller;
        let controllers = (0..n)
            .map(|i| Controller {
                queue: RefCell::new(VecDeque::new()),
                work: Notify::new(&cx, "raw command"),
                core: sim.add_core(CoreSpec::new(format!("array controller {i}"), cfg.clock)),
                logic: Pipe::default(),
            })
            .collect();
        let pages = (cfg.sram.bytes() / geo.page_bytes() as u64) as u32;
        let a = Rc::new(RawArray {
            sram: Sram::new(&cx, pages),
            link: Link::new(link),
            irq,
            controllers,
            dma: Pipe::default(),
            buffers: RefCell::new(FxHashMap::default()),
            stats: RefCell::new(RawStats::default()),
            cfg: cfg.clone(),
            fil,
            geo,
            cx: cx.clone(),
        });
        for c in 0..n as usize {
            for s in 0..cfg.slots {
                let me = a.clone();
                cx.spawn_daemon(CoreId::UNBOUND, format!("controller {c} slot {s}"), async move {
                    me.slot(c).await
                });
            }
        }
        a
    }

    /// The array geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    /// The FIL underneath (for its statistics and the array state).
    pub fn fil(&self) -> &Fil {
        &self.fil
    }

    /// The host link (for its byte counters).
    pub fn link(&self) -> &Link {
        &self.link
    }

    /// The configuration.
    pub fn config(&self) -> &ArrayConfig {
        &self.cfg
    }

    /// The controllers' cores, in order.
    pub fn cores(&self) -> Vec<CoreId> {
        self.controllers.iter().map(|c| c.core).collect()
    }

    /// The controller serving channel `channel`.
    pub fn controller_of(&self, channel: u32) -> usize {
        (channel / self.cfg.channels_per_controller) as usize
    }

    /// What the controllers did so far.
    pub fn stats(&self) -> RawStats {
        self.stats.borrow().clone()
    }

    /// Sends `cmd` to its controller and returns where its completion arrives. The command
    /// takes its place in the controller's FIFO now, before the first await: commands that
    /// program pages of one block must be submitted in page order, and are served in it.
    pub fn submit(self: &Rc<Self>, cmd: RawCommand) -> impl Future<Output = RawCompletion> + use<> {
        let now = self.cx.now();
        let checked = self.check(&cmd);
        let (tx, rx) = oneshot::channel(&self.cx, "raw completion");
        match checked {
            Err(why) => {
                self.stats.borrow_mut().invalid += 1;
                tx.send(RawCompletion {
                    status: RawStatus::Invalid(why),
                    results: Vec::new(),
                    submitted: now,
                    slot: now,
                    flash_done: now,
                });
            }
            Ok(c) => {
                let sram = self.sram_need(&cmd);
                let ctl = &self.controllers[c];
                ctl.queue.borrow_mut().push_back(Queued { cmd, reply: tx, submitted: now, sram });
                ctl.work.notify_one();
            }
        }
        async move { rx.await.expect("a controller answers every command it takes") }
    }

    /// The controller of a well-formed command, or what is wrong with it.
    fn check(&self, cmd: &RawCommand) -> Result<usize, String> {
        let geo = &self.geo;
        if cmd.ppas.is_empty() || cmd.ppas.len() > self.cfg.max_ppas() {
            return Err(format!("{} PPAs (1 to {} fit a command slot)", cmd.ppas.len(), self.cfg.max_ppas()));
        }
        if let Some(bad) = cmd.ppas.iter().find(|p| !geo.contains(**p)) {
            return Err(format!("{bad} is outside the array"));
        }
        let c = self.controller_of(cmd.ppas[0].channel as u32);
        if let Some(other) = cmd.ppas.iter().find(|p| self.controller_of(p.channel as u32) != c) {
            return Err(format!("{other} belongs to another controller than {}", cmd.ppas[0]));
        }
        let single = matches!(cmd.op, RawOp::WriteSector(_) | RawOp::ProgramBuffered { .. });
        if single && cmd.ppas.len() != 1 {
            return Err(format!("a {} names one page", cmd.op.name()));
        }
        match &cmd.op {
            RawOp::Program { writes } if writes.len() != cmd.ppas.len() => {
                Err(format!("{} pages of data for {} PPAs", writes.len(), cmd.ppas.len()))
            }
            RawOp::WriteSector(s) if s.slot >= geo.units_per_page() || s.born == 0 => {
                Err(format!("sector slot {} (a page has {}) born {}", s.slot, geo.units_per_page(), s.born))
            }
            _ => Ok(c),
        }
    }

    /// SRAM page buffers `cmd` takes: its pages' data, or a new buffer for a sector write.
    fn sram_need(&self, cmd: &RawCommand) -> u32 {
        match &cmd.op {
            RawOp::Read { .. } | RawOp::Program { .. } => cmd.ppas.len() as u32,
            RawOp::WriteSector(s) => match self.buffers.borrow_mut().entry(s.buffer) {
                std::collections::hash_map::Entry::Occupied(_) => 0,
                std::collections::hash_map::Entry::Vacant(v) => {
                    let payload = self.fil.array().borrow().keeps_payload();
                    let data = payload.then(|| vec![0; self.geo.page_bytes() as usize]);
                    v.insert(Buffer { oob: Oob::empty(self.geo.units_per_page()), data });
                    1
                }
            },
            RawOp::ProgramBuffered { .. } | RawOp::Erase => 0,
        }
    }

    /// One command slot of controller `c`: takes the next command and runs it to completion.
    async fn slot(self: Rc<Self>, c: usize) {
        loop {
            let next = self.controllers[c].queue.borrow_mut().pop_front();
            let Some(q) = next else {
                self.controllers[c].work.notified().await;
                continue;
            };
            let slot = self.cx.now();
            self.stats.borrow_mut().slot_wait += slot.since(q.submitted);
            let kind = kind(&q.cmd.op);
            let pages = q.cmd.ppas.len() as u64;
            let (status, results, flash_done) = self.execute(c, q.cmd, q.sram).await;
            {
                let mut st = self.stats.borrow_mut();
                st.commands[kind] += 1;
                st.pages += pages;
            }
            self.link.transfer(&self.cx, Dir::ToHost, 16).await;
            let done = RawCompletion { status, results, submitted: q.submitted, slot, flash_done };
            q.reply.send_after(done, self.irq);
        }
    }

    async fn execute(&self, c: usize, cmd: RawCommand, sram: u32) -> (RawStatus, Vec<TxnResult>, SimTime) {
        let ctl = &self.controllers[c];
        self.sram.take(sram).await;
        {
            let mut st = self.stats.borrow_mut();
            st.peak_sram_pages = st.peak_sram_pages.max(self.sram.used());
        }
        let data_in = match &cmd.op {
            RawOp::Program { writes } => writes.len() as u64 * self.geo.page_bytes() as u64,
            RawOp::WriteSector(_) => self.geo.unit_bytes() as u64,
            _ => 0,
        };
        // The command (and its data) crosses the link, the DMA engine moves the data into SRAM,
        // the controller decodes it: reserved together, in the order commands were taken, so
        // that a controller executes its commands in submission order.
        let arrived = self.link.reserve(self.cx.now(), Dir::ToDevice, self.cfg.slot_bytes.bytes() + data_in);
        let in_sram = if data_in > 0 { self.dma.reserve(arrived, self.dma_time(data_in)) } else { arrived };
        let cycles = self.cfg.command_cycles + self.cfg.page_cycles * cmd.ppas.len() as u64;
        let d = self.cx.cycles(ctl.core, cycles);
        let end = ctl.logic.reserve(in_sram, d);
        self.cx.charge(ctl.core, d);
        self.cx.sleep_until(end).await;
        let pages: Vec<PageIdx> = cmd.ppas.iter().map(|p| self.geo.page_idx(*p)).collect();
        match cmd.op {
            RawOp::WriteSector(s) => {
                let mut b = self.buffers.borrow_mut();
                let buf = b.get_mut(&s.buffer).expect("the sector's buffer was made when it was queued");
                buf.oob.set(s.slot as usize, OobSlot { lpn: Some(s.lpn), tag: s.tag });
                buf.oob.set_born(s.slot as usize, s.born);
                if let (Some(page), Some(bytes)) = (buf.data.as_mut(), s.data.as_deref()) {
                    let at = s.slot as usize * self.geo.unit_bytes() as usize;
                    page[at..at + bytes.len()].copy_from_slice(bytes);
                }
                (RawStatus::Ok, Vec::new(), self.cx.now())
            }
            RawOp::ProgramBuffered { buffer } => {
                let Some(buf) = self.buffers.borrow_mut().remove(&buffer) else {
                    let why = format!("no sectors were written into buffer {buffer} for {}", cmd.ppas[0]);
                    return (RawStatus::Invalid(why), Vec::new(), self.cx.now());
                };
                let write = PageWrite { oob: buf.oob, data: buf.data.map(Vec::into_boxed_slice) };
                let r = self.flash(vec![FlashRequest::program(cmd.source, pages[0], write)]).await;
                self.sram.give(1);
                r
            }
            RawOp::Program { writes } => {
                let reqs =
                    pages.iter().zip(writes).map(|(&p, w)| FlashRequest::program(cmd.source, p, w)).collect();
                let r = self.flash(reqs).await;
                self.sram.give(sram);
                r
            }
            RawOp::Erase => {
                self.flash(pages.iter().map(|&p| FlashRequest::erase(cmd.source, p)).collect()).await
            }
            RawOp::Read { bytes, want_data } => {
                let reqs = pages
                    .iter()
                    .map(|&p| {
                        let mut r = FlashRequest::read(cmd.source, p);
                        r.xfer_bytes = bytes;
                        r.want_data = want_data;
                        r
                    })
                    .collect();
                let r = self.flash(reqs).await;
                let per = if bytes == 0 { self.geo.page_bytes() } else { bytes };
                let out = per as u64 * pages.len() as u64;
                let moved = self.dma.reserve(self.cx.now(), self.dma_time(out));
                self.cx.sleep_until(self.link.reserve(moved, Dir::ToHost, out)).await;
                self.sram.give(sram);
                r
            }
        }
    }

    /// The DMA engine's time for `bytes`.
    fn dma_time(&self, bytes: u64) -> SimDuration {
        SimDuration::from_secs_f64(bytes as f64 / self.cfg.dma_bytes_per_sec())
    }

    /// Queues `reqs` to the FIL in order and waits for every answer.
    async fn flash(&self, reqs: Vec<FlashRequest>) -> (RawStatus, Vec<TxnResult>, SimTime) {
        let mut rxs = Vec::with_capacity(reqs.len());
        for r in reqs {
            rxs.push(self.fil.enqueue(r).await);
        }
        let mut results = Vec::with_capacity(rxs.len());
        for rx in rxs {
            results.push(rx.await);
        }
        let status = match results.iter().find_map(|r| match &r.status {
            FlashStatus::StoreError(e) => Some(e.clone()),
            // Only the FTL sets these (its wear-out draws); the raw array never fails an operation.
            FlashStatus::Ok | FlashStatus::ProgramFailed | FlashStatus::EraseFailed => None,
        }) {
            Some(e) => RawStatus::Store(e),
            None => RawStatus::Ok,
        };
        (status, results, self.cx.now())
    }

    /// The DMA engine's busy time so far.
    pub fn dma_busy(&self) -> SimDuration {
        self.dma.busy()
    }

    /// Commands waiting for a slot of controller `c`.
    pub fn queued(&self, c: usize) -> usize {
        self.controllers[c].queue.borrow().len()
    }

    /// Whether `ppa` is a page the array has.
    pub fn contains(&self, ppa: Ppa) -> bool {
        self.geo.contains(ppa)
    }
}
