//! The bridge as the host sees it: commands from the host's thin driver over PCIe into the
//! bridge's queue, converted, striped over the SSDs (each on its SAS/SATA link, one queue of
//! its own), gathered and completed.

use std::rc::Rc;

use firmware::config::BridgeConfig;
use firmware::hil::{Controller, Dir, HostData, Link, Namespace, NvmeCommand, Opcode, Status};
use firmware::system::{BlockFront, FrontCore, FrontFuture, HostStack, Served, Slots};
use firmware::trace::Phases;
use sim::Cx;

use crate::stripe::{Layout, Piece};

/// The queue every SSD serves the bridge on.
pub(crate) const DRIVE_QUEUE: u16 = 1;

/// A PCIe-to-SAS/SATA bridge in front of several SSDs.
pub struct Bridge {
    core: FrontCore,
    cfg: BridgeConfig,
    link: Link,
    drives: Vec<Rc<Controller>>,
    host: Rc<HostStack>,
    layout: Layout,
    slots: Slots,
    engines: Slots,
}

impl Bridge {
    /// A bridge over `drives` (each with its one I/O queue, queue 1, created), its host driver
    /// on `host`. `cfg` must be validated.
    pub fn new(cx: &Cx, cfg: &BridgeConfig, drives: Vec<Rc<Controller>>, host: Rc<HostStack>) -> Bridge {
        let d = drives[0].namespace();
        let stripe = cfg.stripe.bytes() / d.lba_bytes as u64;
        let per_drive = d.capacity_lbas / stripe * stripe;
        let ns = Namespace { capacity_lbas: per_drive * drives.len() as u64, ..d };
        Bridge {
            core: FrontCore::new(cx, ns, cfg.queues),
            link: Link::new(&cfg.link),
            layout: Layout { stripe, drives: drives.len() as u32, spu: d.spu() },
            slots: Slots::new(cx, "bridge queue slot", cfg.queue_depth),
            engines: Slots::new(cx, "bridge conversion engine", cfg.engines),
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
        self.core.cx().sleep(self.cfg.conversion).await;
        self.engines.release();
    }

    /// The SSDs' commands for `cmd`: (drive, command, piece index); `pieces` for data.
    fn fan_out(&self, cmd: &NvmeCommand) -> (Vec<(u32, NvmeCommand)>, Vec<Piece>) {
        let lba = self.core.namespace().lba_bytes as usize;
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

    /// A host command through the bridge: driver, doorbell, a slot of the bridge's queue, the
    /// command (a malformed one is answered without reaching the SSDs), completion.
    async fn handle(&self, qid: u16, cmd: NvmeCommand) -> Served {
        let cx = self.core.cx();
        let ns = self.core.namespace();
        let hint = qid as usize;
        let mut ph = Phases::default();
        self.host.submit(hint).await;
        let t0 = cx.now();
        cx.sleep(self.link.mmio_latency()).await; // doorbell
        self.slots.acquire().await;
        ph.queue_wait = cx.now().since(t0);
        let zoned = matches!(
            cmd.opcode,
            Opcode::ZoneAppend | Opcode::ZoneManagementSend | Opcode::ZoneManagementReceive
        );
        let (status, data) = match ns.check(&cmd) {
            Err(s) => (s, HostData::None),
            // The bridge exposes one conventional namespace over its drives.
            Ok(()) if zoned => (Status::InvalidOpcode, HostData::None),
            Ok(()) => self.relay(&cmd, &mut ph).await,
        };
        let t = cx.now();
        self.link.transfer(cx, Dir::ToHost, 16).await;
        self.slots.release();
        cx.sleep(self.link.mmio_latency()).await; // interrupt
        self.host.complete(hint).await;
        ph.completion += cx.now().since(t);
        Served { status, data, phases: ph }
    }

    /// A valid command over the bridge's link, converted, striped over the SSDs, gathered and
    /// converted back; read data back to the host.
    async fn relay(&self, cmd: &NvmeCommand, ph: &mut Phases) -> (Status, HostData) {
        let cx = self.core.cx();
        let ns = self.core.namespace();
        let bytes = ns.bytes(cmd.nlb);
        let t = cx.now();
        self.link.transfer(cx, Dir::ToDevice, 64).await;
        if cmd.opcode == Opcode::Write {
            self.link.transfer(cx, Dir::ToDevice, bytes).await;
        }
        ph.dma += cx.now().since(t);
        let t = cx.now();
        self.convert().await;
        ph.firmware += cx.now().since(t);
        let (cmds, pieces) = self.fan_out(cmd);
        let answers = sim::join_all(cmds.into_iter().map(|(d, c)| {
            let drive = self.drives[d as usize].clone();
            async move { drive.submit(DRIVE_QUEUE, c).await }
        }))
        .await;
        // The slowest SSD's phases are the command's critical path.
        if let Some(slow) = answers.iter().max_by_key(|a| a.timing.completed) {
            *ph += slow.phases;
        }
        let status = answers.iter().map(|a| a.status.clone()).find(|s| *s != Status::Success);
        let t = cx.now();
        self.convert().await;
        ph.firmware += cx.now().since(t);
        let data = match (&status, cmd.opcode) {
            (None, Opcode::Read) => {
                let t = cx.now();
                self.link.transfer(cx, Dir::ToHost, bytes).await;
                ph.dma += cx.now().since(t);
                let answers = answers.into_iter().map(|a| a.data).collect();
                self.layout.scatter(&pieces, answers, cmd.nlb, ns.lba_bytes as usize)
            }
            _ => HostData::None,
        };
        (status.unwrap_or(Status::Success), data)
    }
}

impl BlockFront for Bridge {
    fn core(&self) -> &FrontCore {
        &self.core
    }

    fn run(&self, qid: u16, cmd: NvmeCommand) -> FrontFuture<'_, Served> {
        Box::pin(self.handle(qid, cmd))
    }
}
