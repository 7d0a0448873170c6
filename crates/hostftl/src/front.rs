//! The host-side FTL's block driver: what host threads submit to. Each command costs host CPU
//! (system call, block layer; completion) on the submitting thread's core, then runs through
//! the FTL, whose work also runs there.

use std::cell::RefCell;
use std::rc::Rc;

use firmware::hil::{HostData, HostInterfaceConfig, Namespace, NvmeCommand, Opcode, SmartCounters, Status};
use firmware::system::{BlockFront, FrontCore, FrontFuture, HostStack, Served};
use firmware::trace::Phases;
use nand::Lpn;
use sim::{Cx, SimDuration};

use crate::ftl::HostFtl;

/// The block driver of a host-side FTL.
pub struct HostFtlFront {
    core: FrontCore,
    ftl: HostFtl,
    host: Rc<HostStack>,
    smart: RefCell<SmartCounters>,
}

impl HostFtlFront {
    /// A driver for `ftl` with the queues, block size and transfer limit of `iface` (the
    /// device's `[host]` section), its host work on `host`.
    pub fn new(cx: &Cx, ftl: HostFtl, host: Rc<HostStack>, iface: &HostInterfaceConfig) -> Self {
        let ns = Namespace::new(iface, ftl.logical_units(), ftl.inner.geo.unit_bytes(), ftl.inner.payload);
        HostFtlFront {
            core: FrontCore::new(cx, ns, iface.queues),
            ftl,
            host,
            smart: RefCell::new(SmartCounters::default()),
        }
    }

    /// The SMART counters so far.
    pub fn smart(&self) -> SmartCounters {
        self.smart.borrow().clone()
    }

    /// A host command: the driver's CPU around the FTL's work. The firmware phase is the time
    /// the FTL's own phases do not account for.
    async fn handle(&self, qid: u16, cmd: NvmeCommand) -> Served {
        let cx = self.core.cx();
        let ns = self.core.namespace();
        let submitted = cx.now();
        let hint = qid as usize;
        let mut ph = Phases::default();
        self.host.submit(hint).await;
        let checked = ns.check(&cmd).and_then(|()| match cmd.placement {
            Some(p) => self.ftl.check_placement(p).map_err(|e| Status::InvalidField(e.to_string())),
            None => Ok(()),
        });
        let (status, data) = match checked {
            Err(s) => (s, HostData::None),
            Ok(()) => self.execute(&cmd, &mut ph).await,
        };
        self.host.complete(hint).await;
        self.smart.borrow_mut().account(&cmd, &status, ns.lba_bytes);
        let total = cx.now().since(submitted);
        let others = ph.fil_wait + ph.command + ph.dma + ph.cache;
        ph.firmware = SimDuration::from_nanos(total.as_nanos().saturating_sub(others.as_nanos()));
        Served { status, data, phases: ph }
    }

    async fn execute(&self, cmd: &NvmeCommand, ph: &mut Phases) -> (Status, HostData) {
        let ns = self.core.namespace();
        match cmd.opcode {
            Opcode::Read => {
                let parts = ns.split(cmd.slba, cmd.nlb);
                let lpns: Vec<Lpn> = parts.iter().map(|p| p.lpn).collect();
                match ns.read_data(&parts, &self.ftl.read(&lpns, ph).await) {
                    Ok(data) => (Status::Success, data),
                    Err(status) => (status, HostData::None),
                }
            }
            Opcode::Write | Opcode::WriteZeroes => {
                self.trim(ns.trimmed_units(cmd));
                let writes = ns.unit_writes(cmd).collect();
                match self.ftl.write(writes, ns.lba_bytes, cmd.placement, cmd.fua, ph).await {
                    Ok(()) => (Status::Success, HostData::None),
                    Err(e) => (Status::InternalError(e), HostData::None),
                }
            }
            Opcode::Flush => {
                self.ftl.flush().await;
                (Status::Success, HostData::None)
            }
            Opcode::DatasetManagement => {
                self.trim(ns.trimmed_units(cmd));
                (Status::Success, HostData::None)
            }
            // A host-side FTL exposes a conventional namespace.
            Opcode::ZoneAppend | Opcode::ZoneManagementSend | Opcode::ZoneManagementReceive => {
                (Status::InvalidOpcode, HostData::None)
            }
        }
    }

    fn trim(&self, units: Vec<Lpn>) {
        for lpn in units {
            self.ftl.trim(lpn);
        }
    }
}

impl BlockFront for HostFtlFront {
    fn core(&self) -> &FrontCore {
        &self.core
    }

    fn run(&self, qid: u16, cmd: NvmeCommand) -> FrontFuture<'_, Served> {
        Box::pin(self.handle(qid, cmd))
    }
}
