//! The FIL service loop, running as one task on the FIL core:
//!
//! 1. process hardware events that are due (phase ends);
//! 2. take new transactions off the available ring into the per-die queues;
//! 3. on every channel that became free, start the next data-out or command;
//! 4. sleep until the next hardware event or ring item.
//!
//! Firmware costs (intake, dispatch, completion cycles) are charged on the FIL core as they
//! happen, so a slow FIL delays the hardware exactly as polling firmware would.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::rc::Rc;

use nand::DieIdx;
use sim::SimTime;
use sim::trace::Track;

use crate::fil::handle::Shared;
use crate::fil::hw::{Batch, BatchId, Batches, ChannelHw, DieHw, DieSet, Phase, TxnBatch};
use crate::fil::policy::SchedPolicy;
use crate::fil::queues::DieQueues;
use crate::fil::txn::{FlashOp, FlashStatus, QueueKind, Txn};

pub(crate) struct Engine {
    sh: Rc<Shared>,
    policy: Box<dyn SchedPolicy>,
    dies: Vec<DieHw>,
    channels: Vec<ChannelHw>,
    queues: Vec<DieQueues>,
    batches: Batches,
    events: BinaryHeap<Reverse<(SimTime, u64, BatchId)>>,
    seq: u64,
    dirty: Vec<u32>,
    queued: usize,
    /// The dies with transactions queued, one bit set per channel (`kick` visits only these).
    waiting: DieSet,
}

impl Engine {
    pub fn new(sh: Rc<Shared>) -> Self {
        let dies = sh.geo.total_dies() as usize;
        let channels = sh.geo.channels as usize;
        Engine {
            policy: sh.cfg.policy.build(),
            dies: (0..dies).map(|_| DieHw::default()).collect(),
            channels: (0..channels).map(|_| ChannelHw::default()).collect(),
            queues: (0..dies).map(|_| DieQueues::default()).collect(),
            batches: Batches::default(),
            events: BinaryHeap::new(),
            seq: 0,
            dirty: Vec::new(),
            queued: 0,
            waiting: DieSet::new(channels, sh.geo.dies_per_channel() as usize),
            sh,
        }
    }

    pub async fn run(mut self) {
        let sh = self.sh.clone();
        loop {
            while let Some(&Reverse((at, _, b))) = self.events.peek() {
                if at > sh.cx.now() {
                    break;
                }
                self.events.pop();
                self.on_event(b).await;
            }
            while let Some(txn) = sh.ring.try_pop() {
                self.intake(txn).await;
            }
            while let Some(c) = self.dirty.pop() {
                self.channels[c as usize].dirty = false;
                self.kick(c).await;
            }
            let next = self.events.peek().map_or(SimTime::MAX, |e| e.0.0);
            if next <= sh.cx.now() || !self.dirty.is_empty() {
                continue; // firmware costs let time pass; catch up before sleeping
            }
            sh.ring.wait_until(next).await;
            // An item that woke us is taken in before the events due with it, as ever.
            if let Some(txn) = sh.ring.try_pop() {
                self.intake(txn).await;
            }
        }
    }

    fn schedule(&mut self, at: SimTime, b: BatchId) {
        self.seq += 1;
        self.events.push(Reverse((at, self.seq, b)));
    }

    fn mark_dirty(&mut self, ch: u32) {
        let c = &mut self.channels[ch as usize];
        if !c.dirty && c.owner.is_none() {
            c.dirty = true;
            self.dirty.push(ch);
        }
    }

    fn channel_of(&self, die: DieIdx) -> u32 {
        self.sh.geo.channel_of(die)
    }

    async fn intake(&mut self, mut txn: Box<Txn>) {
        let sh = self.sh.clone();
        if sh.cfg.intake_cycles > 0 {
            sh.cx.compute(sh.cfg.intake_cycles).await;
        }
        txn.out.timing.queued = sh.cx.now();
        if txn.req.op == FlashOp::Read {
            // Its data out reads the page's units from the array, a tR and more from now: the
            // CPU can fetch them meanwhile (random pages, a cache miss each at full size).
            sh.array.borrow().prefetch_page(txn.req.page);
        }
        let die = sh.geo.die_of(sh.geo.block_of(txn.req.page));
        let kind = QueueKind::of(txn.req.op, txn.req.source);
        self.queues[die.idx()].push(kind, txn);
        let (ch, n) = (self.channel_of(die), self.sh.geo.dies_per_channel());
        self.waiting.insert(ch as usize, (die.0 - ch * n) as usize);
        self.queued += 1;
        let mut st = sh.stats.borrow_mut();
        st.max_queued = st.max_queued.max(self.queued);
        drop(st);
        self.mark_dirty(self.channel_of(die));
    }

    /// Starts the next bus operation on a free channel. Order: a read or erase command for an
    /// idle die (a few microseconds of setup that starts its array working), then the oldest
    /// waiting data out, then a program (whose data load holds the bus much longer). The die
    /// picks come from the scheduling policy, visiting the channel's dies round robin.
    async fn kick(&mut self, ch: u32) {
        if self.channels[ch as usize].owner.is_some() {
            return;
        }
        let n = self.sh.geo.dies_per_channel();
        let rr = self.channels[ch as usize].rr;
        let mut deferred = None;
        // The channel's dies with queued transactions, round robin from `rr` (the others have
        // nothing for the policy to pick).
        let mut from = rr as usize;
        let mut wrapped = false;
        loop {
            let end = if wrapped { rr as usize } else { n as usize };
            let Some(local) = self.waiting.next(ch as usize, from, end) else {
                if wrapped {
                    break;
                }
                (wrapped, from) = (true, 0);
                continue;
            };
            from = local + 1;
            // The die's offset from `rr`, round robin (`local` and `rr` are under `n`).
            let local = local as u32;
            let (k, die) = (if local >= rr { local - rr } else { local + n - rr }, ch * n + local);
            let Some(kind) = self.pick(die as usize) else { continue };
            if kind.op() == FlashOp::Program {
                deferred.get_or_insert((k, die, kind));
                continue;
            }
            return self.dispatch(ch, k, die, kind).await;
        }
        if let Some(b) = self.channels[ch as usize].out_wait.pop_front() {
            return self.start_data_out(ch, b);
        }
        if let Some((k, die, kind)) = deferred {
            self.dispatch(ch, k, die, kind).await;
        }
    }

    /// The policy's choice for `die`, if it is free for any queued transaction.
    fn pick(&mut self, die: usize) -> Option<QueueKind> {
        if self.queues[die].total() == 0 {
            return None;
        }
        let d = &self.dies[die];
        if d.reg.is_some() {
            return None;
        }
        // A free die takes anything; one whose array is busy with a program takes another
        // program into its cache register (cache program), nothing else, and not while a read
        // the host waits for is queued: chained cache programs would keep the array busy for
        // as long as writes keep coming, and the read would wait behind all of them (a host
        // read on consumer-tlc waited 1.8 s behind a writer's stream).
        let ops = match d.array {
            None => [true; 3],
            Some(a) => {
                let q = &self.queues[die];
                let reads_wait = q.len(QueueKind::UserRead) + q.len(QueueKind::MappingRead) > 0;
                let cached =
                    self.sh.timing.cache_program && !reads_wait && self.batches.get(a).op == FlashOp::Program;
                [false, cached, false]
            }
        };
        if ops == [false; 3] {
            return None;
        }
        let allowed = QueueKind::ALL.map(|q| ops[q.op() as usize]);
        self.policy.pick(DieIdx(die as u32), &self.queues[die].view(allowed))
    }

    /// Takes a batch from `die`'s `kind` queue and starts it (`k`: the die's round-robin offset).
    async fn dispatch(&mut self, ch: u32, k: u32, die: u32, kind: QueueKind) {
        let sh = self.sh.clone();
        if sh.cfg.dispatch_cycles > 0 {
            sh.cx.compute(sh.cfg.dispatch_cycles).await;
        }
        let txns =
            self.queues[die as usize].take_batch(kind, &sh.geo, sh.cfg.multi_plane, sh.cfg.multi_plane_scan);
        self.queued -= txns.len();
        let n = sh.geo.dies_per_channel();
        if self.queues[die as usize].total() == 0 {
            self.waiting.remove(ch as usize, (die - ch * n) as usize);
        }
        let c = &mut self.channels[ch as usize];
        c.rr = if c.rr + k + 1 >= n { c.rr + k + 1 - n } else { c.rr + k + 1 };
        self.start(DieIdx(die), kind.op(), txns);
    }

    fn take_channel(&mut self, ch: u32, b: BatchId) {
        let c = &mut self.channels[ch as usize];
        debug_assert!(c.owner.is_none());
        c.owner = Some(b);
        c.since = self.sh.cx.now();
    }

    fn release_channel(&mut self, ch: u32) {
        let now = self.sh.cx.now();
        let c = &mut self.channels[ch as usize];
        c.owner = None;
        self.sh.stats.borrow_mut().channel_busy_ns[ch as usize] += now.since(c.since).as_nanos();
        self.mark_dirty(ch);
    }

    fn start(&mut self, die: DieIdx, op: FlashOp, mut txns: TxnBatch) {
        let sh = self.sh.clone();
        let (now, t) = (sh.cx.now(), &sh.timing);
        let ch = self.channel_of(die);
        for txn in &mut txns {
            txn.out.timing.dispatched = now;
        }
        let n = txns.len();
        let mut array = sh.array.borrow_mut();
        let end = match op {
            FlashOp::Read => now + t.t_cmd_read,
            FlashOp::Erase => {
                for txn in &mut txns {
                    txn.out.timing.xfer_start = now;
                    txn.out.timing.xfer_end = now;
                    if let Err(e) = array.erase(sh.geo.block_of(txn.req.page)) {
                        txn.out.status = FlashStatus::StoreError(e.to_string());
                    }
                }
                now + t.t_cmd_erase
            }
            FlashOp::Program => {
                let x = t.page_write_transfer();
                let mut at = now + t.t_cmd_prog;
                for txn in &mut txns {
                    txn.out.timing.xfer_start = at;
                    at += x;
                    txn.out.timing.xfer_end = at;
                    let w = txn.req.write.as_ref().expect("a program carries its data");
                    match array.program(txn.req.page, &w.oob, w.data.as_deref()) {
                        Ok(seq) => txn.out.seq = seq,
                        Err(e) => txn.out.status = FlashStatus::StoreError(e.to_string()),
                    }
                }
                at
            }
        };
        drop(array);
        let phase = if op == FlashOp::Program { Phase::DataIn } else { Phase::Setup };
        let b = self.batches.insert(Batch { op, die, txns, phase });
        let d = &mut self.dies[die.idx()];
        d.busy_since.get_or_insert(now);
        d.reg = Some(b);
        if op != FlashOp::Program {
            d.array = Some(b);
        }
        self.take_channel(ch, b);
        self.schedule(end, b);
        let mut st = sh.stats.borrow_mut();
        st.batches += 1;
        if n > 1 {
            st.multi_plane_txns += n as u64;
        }
    }

    fn start_data_out(&mut self, ch: u32, b: BatchId) {
        self.take_channel(ch, b);
        let sh = self.sh.clone();
        let mut at = sh.cx.now();
        let batch = self.batches.get_mut(b);
        batch.phase = Phase::DataOut;
        for txn in &mut batch.txns {
            let x = match txn.req.xfer_bytes {
                0 => sh.timing.page_read_transfer(),
                bytes => sh.timing.read_transfer(bytes),
            };
            txn.out.timing.xfer_start = at;
            at += x;
            txn.out.timing.xfer_end = at;
        }
        self.schedule(at, b);
    }

    /// The longest array time among a batch's pages.
    fn array_time(&self, b: BatchId) -> sim::SimDuration {
        let (geo, t) = (&self.sh.geo, &self.sh.timing);
        let batch = self.batches.get(b);
        batch
            .txns
            .iter()
            .map(|txn| {
                let offset = geo.page_in_block(txn.req.page);
                match batch.op {
                    FlashOp::Read => t.t_read(offset),
                    FlashOp::Program => t.t_prog(offset),
                    FlashOp::Erase => t.t_erase,
                }
            })
            .max()
            .unwrap_or_default()
    }

    fn start_array(&mut self, b: BatchId) {
        let now = self.sh.cx.now();
        let die = self.batches.get(b).die;
        self.dies[die.idx()].array = Some(b);
        if self.dies[die.idx()].reg == Some(b) && self.batches.get(b).op == FlashOp::Program {
            self.dies[die.idx()].reg = None;
        }
        self.batches.get_mut(b).phase = Phase::Array;
        let end = now + self.array_time(b);
        self.schedule(end, b);
    }

    async fn on_event(&mut self, b: BatchId) {
        let now = self.sh.cx.now();
        let (op, die, phase) = {
            let batch = self.batches.get(b);
            (batch.op, batch.die, batch.phase)
        };
        let ch = self.channel_of(die);
        match phase {
            Phase::Setup => {
                self.release_channel(ch);
                self.start_array(b);
            }
            Phase::DataIn => {
                self.release_channel(ch);
                if self.dies[die.idx()].array.is_none() {
                    self.start_array(b);
                } else {
                    self.batches.get_mut(b).phase = Phase::Loaded;
                }
            }
            Phase::Array => {
                for txn in &mut self.batches.get_mut(b).txns {
                    txn.out.timing.array_done = now;
                }
                self.dies[die.idx()].array = None;
                match op {
                    FlashOp::Read => {
                        self.batches.get_mut(b).phase = Phase::ReadyOut;
                        self.channels[ch as usize].out_wait.push_back(b);
                        self.mark_dirty(ch);
                    }
                    FlashOp::Program => {
                        if let Some(l) = self.dies[die.idx()].reg
                            && self.batches.get(l).phase == Phase::Loaded
                        {
                            self.start_array(l);
                        }
                        self.finish(b).await;
                    }
                    FlashOp::Erase => {
                        self.dies[die.idx()].reg = None;
                        self.finish(b).await;
                    }
                }
            }
            Phase::DataOut => {
                self.release_channel(ch);
                self.dies[die.idx()].reg = None;
                self.read_out(b);
                self.finish(b).await;
            }
            Phase::Loaded | Phase::ReadyOut => unreachable!("no event is scheduled in phase {phase:?}"),
        }
    }

    /// Copies what a finished read returns out of the array.
    fn read_out(&mut self, b: BatchId) {
        let sh = self.sh.clone();
        let mut array = sh.array.borrow_mut();
        let page_bytes = sh.geo.page_bytes() as usize;
        let payload = array.keeps_payload();
        for txn in &mut self.batches.get_mut(b).txns {
            let mut buf = (txn.req.want_data && payload).then(|| vec![0u8; page_bytes].into_boxed_slice());
            let read = match buf.as_deref_mut() {
                Some(d) if !txn.req.want_oob => array.read_payload(txn.req.page, d),
                d => array.read(txn.req.page, d),
            };
            // The parity comes with the page (its spare area), so no read is counted for it.
            let parity = match (&buf, array.parity()) {
                (Some(_), Some(p)) if txn.req.want_parity => {
                    let mut parity = vec![0u8; p.page_parity_bytes()].into_boxed_slice();
                    read.as_ref().ok().map(|_| array.read_parity(txn.req.page, &mut parity).map(|()| parity))
                }
                _ => None,
            };
            match (read, parity.transpose()) {
                (Ok(oob), Ok(parity)) => {
                    txn.out.oob = Some(oob);
                    txn.out.data = buf;
                    txn.out.parity = parity;
                }
                (Err(e), _) | (_, Err(e)) => txn.out.status = FlashStatus::StoreError(e.to_string()),
            }
        }
    }

    /// Retires a batch: frees the die if it is now idle and posts each completion.
    async fn finish(&mut self, b: BatchId) {
        let sh = self.sh.clone();
        let batch = self.batches.remove(b);
        let d = &mut self.dies[batch.die.idx()];
        // Busy time is banked at every batch's end, not only when the die goes idle: with cache
        // program a die writing without a pause never goes idle, and its busy time reached the
        // statistics only after the run (consumer-tlc reported its dies 0.0% busy).
        if let Some(since) = d.busy_since {
            let now = sh.cx.now();
            sh.stats.borrow_mut().die_busy_ns[batch.die.idx()] += now.since(since).as_nanos();
            let idle = d.array.is_none() && d.reg.is_none();
            d.busy_since = (!idle).then_some(now);
        }
        self.mark_dirty(self.channel_of(batch.die));
        let load = &sh.load[batch.die.idx()];
        load.set(load.get() - batch.txns.len() as u32);
        for mut txn in batch.txns {
            if sh.cfg.complete_cycles > 0 {
                sh.cx.compute(sh.cfg.complete_cycles).await;
            }
            txn.out.timing.completed = sh.cx.now();
            let bytes = match batch.op {
                FlashOp::Read if txn.req.xfer_bytes > 0 => txn.req.xfer_bytes,
                FlashOp::Read => sh.timing.page_xfer_bytes(),
                FlashOp::Program => sh.timing.page_xfer_bytes(),
                FlashOp::Erase => 0,
            };
            if sh.cx.tracing() {
                trace_txn(&sh, batch.die, batch.op, &txn);
            }
            let page = txn.req.page;
            sh.stats.borrow_mut().record(
                batch.die.idx(),
                batch.op,
                txn.req.source,
                txn.req.flow,
                &txn.out.timing,
                bytes,
                || sh.timing.cell.page_type_index(sh.geo.page_in_block(page)),
            );
            sh.answer(txn, sh.cfg.used_ring_latency);
        }
    }
}

/// Records a finished transaction's die and channel spans.
fn trace_txn(sh: &Shared, die: DieIdx, op: FlashOp, txn: &Txn) {
    let t = &txn.out.timing;
    let name = crate::fil::txn::trace_label(op, txn.req.source);
    let die_end = t.array_done.max(t.xfer_end);
    sh.cx.trace_span(Track::Die(die.0), t.dispatched, die_end.since(t.dispatched), name, txn.request);
    if t.xfer_end > t.xfer_start {
        let channel = sh.geo.channel_of(die);
        sh.cx.trace_span(Track::Channel(channel), t.xfer_start, t.transfer(), name, txn.request);
    }
}
