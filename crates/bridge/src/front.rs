//! The bridge as the host sees it: commands from the host's thin driver over PCIe into the
//! bridge's queue, converted, striped over the SSDs (each on its SAS/SATA link, one queue of
//! its own), gathered and completed.

use std::cell::Cell;
use std::rc::Rc;

use firmware::config::BridgeConfig;
use firmware::hil::{
    CommandTiming, Controller, Dir, HostData, Link, NvmeCommand, NvmeCompletion, Opcode, Status,
};
use firmware::system::{BlockFront, FrontFuture, HostStack, QueueSet, Slots, check_command};
use firmware::trace::Phases;
use sim::Cx;

use crate::stripe::{Layout, Piece};

/// The queue every SSD serves the bridge on.
pub(crate) const DRIVE_QUEUE: u16 = 1;

/// A PCIe-to-SAS/SATA bridge in front of several SSDs.
pub struct Bridge {
    cx: Cx,
    cfg: BridgeConfig,
    link: Link,
    drives: Vec<Rc<Controller>>,
    host: Rc<HostStack>,
    layout: Layout,
    slots: Slots,
    engines: Slots,
    lba_bytes: u32,
    capacity_lbas: u64,
    max_transfer: u64,
    queues: QueueSet,
    completed: Cell<u64>,
    next_id: Cell<u64>,
}

impl Bridge {
    /// A bridge over `drives` (each with its one I/O queue, queue 1, created), its host driver
    /// on `host`. `cfg` must be validated.
    pub fn new(cx: &Cx, cfg: &BridgeConfig, drives: Vec<Rc<Controller>>, host: Rc<HostStack>) -> Bridge {
        let d = &drives[0];
        let (lba_bytes, unit) = (d.lba_bytes(), d.unit_bytes());
        let stripe = cfg.stripe.bytes() / lba_bytes as u64;
        let per_drive = d.capacity_lbas() / stripe * stripe;
        Bridge {
            cx: cx.clone(),
            link: Link::new(&cfg.link),
            layout: Layout { stripe, drives: drives.len() as u32, spu: unit / lba_bytes },
            slots: Slots::new(cx, "bridge queue slot", cfg.queue_depth),
            engines: Slots::new(cx, "bridge conversion engine", cfg.engines),
            lba_bytes,
            capacity_lbas: per_drive * drives.len() as u64,
            max_transfer: d.max_transfer(),
            queues: QueueSet::new(cfg.queues),
            completed: Cell::new(0),
            next_id: Cell::new(0),
            cfg: cfg.clone(),
            drives,
            host,
        }
    }

    /// The bridge's PCIe link (for its byte counters).
    pub fn link(&self) -> &Link {
        &self.link
    }

    /// Protocol conversion on one of the bridge's engines.
    async fn convert(&self) {
        self.engines.acquire().await;
        self.cx.sleep(self.cfg.conversion).await;
        self.engines.release();
    }

    /// The SSDs' commands for `cmd`: (drive, command, piece index); `pieces` for data.
    fn fan_out(&self, cmd: &NvmeCommand) -> (Vec<(u32, NvmeCommand)>, Vec<Piece>) {
        let lba = self.lba_bytes as usize;
        match cmd.opcode {
            Opcode::Flush => {
                ((0..self.drives.len() as u32).map(|d| (d, NvmeCommand::flush())).collect(), Vec::new())
            }
            Opcode::DatasetManagement => {
                let mut per: Vec<Vec<(u64, u32)>> = vec![Vec::new(); self.drives.len()];
                for &(s, n) in &cmd.ranges {
                    for p in self.layout.pieces(s, n) {
                        per[p.drive as usize].push((p.first, p.nlb));
                    }
                }
                let cmds = per
                    .into_iter()
                    .enumerate()
                    .filter(|(_, r)| !r.is_empty())
                    .flat_map(|(d, r)| {
                        r.chunks(256)
                            .map(|c| (d as u32, NvmeCommand::deallocate(c.to_vec())))
                            .collect::<Vec<_>>()
                    })
                    .collect();
                (cmds, Vec::new())
            }
            op => {
                let pieces = self.layout.pieces(cmd.slba, cmd.nlb);
                let cmds = (0..pieces.len())
                    .map(|i| {
                        let p = &pieces[i];
                        let mut c = match op {
                            Opcode::Read => NvmeCommand::read(p.first, p.nlb),
                            Opcode::Write => NvmeCommand::write(
                                p.first,
                                p.nlb,
                                self.layout.gather(&cmd.data, &pieces, i, lba),
                            ),
                            _ => NvmeCommand::write_zeroes(p.first, p.nlb),
                        };
                        c.fua = cmd.fua;
                        (p.drive, c)
                    })
                    .collect();
                (cmds, pieces)
            }
        }
    }

    async fn run(&self, qid: u16, cmd: NvmeCommand) -> NvmeCompletion {
        let submitted = self.cx.now();
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let hint = qid as usize;
        let mut ph = Phases::default();
        let done = |status, data, ph| NvmeCompletion {
            status,
            data,
            timing: CommandTiming { id, submitted, completed: self.cx.now() },
            phases: ph,
        };
        if !self.has_queue(qid) {
            return done(Status::InvalidQueue, HostData::None, ph);
        }
        self.host.submit(hint).await;
        let t0 = self.cx.now();
        self.cx.sleep(self.link.mmio_latency()).await; // doorbell
        self.slots.acquire().await;
        ph.queue_wait = self.cx.now().since(t0);
        let status = check_command(&cmd, self.capacity_lbas, self.lba_bytes, self.max_transfer);
        let bytes = cmd.nlb as u64 * self.lba_bytes as u64;
        let (status, data) = match status {
            Err(s) => (s, HostData::None),
            Ok(()) => {
                let t = self.cx.now();
                self.link.transfer(&self.cx, Dir::ToDevice, 64).await;
                if cmd.opcode == Opcode::Write {
                    self.link.transfer(&self.cx, Dir::ToDevice, bytes).await;
                }
                ph.dma += self.cx.now().since(t);
                let t = self.cx.now();
                self.convert().await;
                ph.firmware += self.cx.now().since(t);
                let (cmds, pieces) = self.fan_out(&cmd);
                let answers = sim::join_all(cmds.into_iter().map(|(d, c)| {
                    let drive = self.drives[d as usize].clone();
                    async move { drive.submit(DRIVE_QUEUE, c).await }
                }))
                .await;
                // The slowest SSD's phases are the command's critical path.
                if let Some(slow) = answers.iter().max_by_key(|a| a.timing.completed) {
                    ph += slow.phases;
                }
                let status = answers.iter().map(|a| a.status.clone()).find(|s| *s != Status::Success);
                let t = self.cx.now();
                self.convert().await;
                ph.firmware += self.cx.now().since(t);
                let data = match (&status, cmd.opcode) {
                    (None, Opcode::Read) => {
                        let t = self.cx.now();
                        self.link.transfer(&self.cx, Dir::ToHost, bytes).await;
                        ph.dma += self.cx.now().since(t);
                        let lba = self.lba_bytes as usize;
                        self.layout.scatter(
                            &pieces,
                            answers.into_iter().map(|a| a.data).collect(),
                            cmd.nlb,
                            lba,
                        )
                    }
                    _ => HostData::None,
                };
                (status.unwrap_or(Status::Success), data)
            }
        };
        let t = self.cx.now();
        self.link.transfer(&self.cx, Dir::ToHost, 16).await;
        self.slots.release();
        self.cx.sleep(self.link.mmio_latency()).await; // interrupt
        self.host.complete(hint).await;
        ph.completion += self.cx.now().since(t);
        self.completed.set(self.completed.get() + 1);
        done(status, data, ph)
    }
}

impl BlockFront for Bridge {
    fn cx(&self) -> &Cx {
        &self.cx
    }

    fn capacity_lbas(&self) -> u64 {
        self.capacity_lbas
    }

    fn lba_bytes(&self) -> u32 {
        self.lba_bytes
    }

    fn unit_bytes(&self) -> u32 {
        self.drives[0].unit_bytes()
    }

    fn payload(&self) -> bool {
        self.drives[0].payload()
    }

    fn completed(&self) -> u64 {
        self.completed.get()
    }

    fn has_queue(&self, qid: u16) -> bool {
        self.queues.has(qid)
    }

    fn create_queue(&self, qid: u16) -> FrontFuture<'_, Result<(), String>> {
        Box::pin(async move { self.queues.create(qid) })
    }

    fn submit(&self, qid: u16, cmd: NvmeCommand) -> FrontFuture<'_, NvmeCompletion> {
        Box::pin(self.run(qid, cmd))
    }
}
