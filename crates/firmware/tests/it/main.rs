//! Integration tests of the firmware crate.

mod conformance;
mod conformance_long;
mod errors;
mod extend;
mod fdp;
mod fil_timing;
mod hil_fetch;
mod life;
mod recovery;
mod zones;

use std::cell::RefCell;
use std::rc::Rc;

use firmware::config::DeviceConfig;
use firmware::fil::{Fil, FilConfig, FlashRequest, TxnResult};
use nand::store::MetaStore;
use nand::{FlashArray, Geometry, PageIdx, Timing};
use sim::{ByteSize, CoreId, CoreSpec, Frequency, Sim};
pub use testkit::small_device;

/// A bench: a simulation with one FIL core and a metadata-only array.
pub struct Bench {
    /// The simulation.
    pub sim: Sim,
    /// The FIL under test.
    pub fil: Fil,
}

impl Bench {
    /// A bench for `geo` and `timing` with FIL configuration `cfg`.
    pub fn new(geo: Geometry, timing: Timing, cfg: FilConfig) -> Bench {
        geo.validate().unwrap();
        timing.validate().unwrap();
        cfg.validate().unwrap();
        let sim = Sim::new(1);
        let core = sim.add_core(CoreSpec::new("fil", Frequency::mhz(500)));
        let model = timing.model(geo.page_bytes(), geo.oob_size.bytes() as u32);
        let array = Rc::new(RefCell::new(FlashArray::new(geo.clone(), Box::new(MetaStore::new(&geo)))));
        let fil = Fil::start(&sim.cx(), core, &cfg, model, array);
        Bench { sim, fil }
    }

    /// Programs `pages` instantly (no timing), so that they can be read.
    pub fn prefill(&self, pages: &[PageIdx]) {
        let mut a = self.fil.array().borrow_mut();
        let upp = a.geometry().units_per_page() as usize;
        for &p in pages {
            a.program(p, &nand::Oob::empty(upp as u32), None).unwrap();
        }
    }

    /// Submits `reqs` at t=0, in order, each from its own task; returns results in order.
    pub fn run_all(&self, reqs: Vec<FlashRequest>) -> Vec<TxnResult> {
        let out: Rc<RefCell<Vec<Option<TxnResult>>>> =
            Rc::new(RefCell::new((0..reqs.len()).map(|_| None).collect()));
        let cx = self.sim.cx();
        for (i, r) in reqs.into_iter().enumerate() {
            let (fil, out) = (self.fil.clone(), out.clone());
            cx.spawn(CoreId::UNBOUND, format!("req{i}"), async move {
                let res = fil.submit(r).await;
                out.borrow_mut()[i] = Some(res);
            });
        }
        self.sim.run().unwrap();
        Rc::try_unwrap(out).ok().unwrap().into_inner().into_iter().map(|r| r.unwrap()).collect()
    }
}

/// 1 channel x 4 ways x 1 die x 2 planes x 8 blocks x 64 pages of 16 KiB, no OOB.
pub fn geo_one_channel() -> Geometry {
    Geometry {
        channels: 1,
        ways: 4,
        dies: 1,
        planes: 2,
        blocks: 8,
        pages: 64,
        page_size: ByteSize::kib(16),
        oob_size: ByteSize(0),
        mapping_unit: ByteSize::kib(4),
    }
}

/// PipeSSD's flash timing: read = 3 us setup + 40 us + 60 us transfer; write = 5 us + 400 us +
/// 60 us (16 KiB at 400 MT/s x 8 bit is 40.96 us; the overhead makes it 60 us).
pub fn pipessd_timing() -> Timing {
    use sim::SimDuration as D;
    Timing {
        cell: nand::CellType::Slc,
        t_read: Some(nand::PerPageType::One(D::from_micros(40))),
        t_prog: Some(nand::PerPageType::One(D::from_micros(400))),
        t_cmd_read: D::from_micros(3),
        t_cmd_prog: D::from_micros(5),
        read_xfer_overhead: D::from_nanos(60_000 - 40_960),
        write_xfer_overhead: D::from_nanos(60_000 - 40_960),
        ..Timing::default()
    }
}

/// [`small_device`] on a four-core controller running the architecture `kind` (its
/// defaults: the four stage cores of a pipeline, every core for tradition).
pub fn arch_device(name: &str, kind: &str, ftl: &str) -> DeviceConfig {
    let cores = "[{ name = 'c0', clock = '1.2GHz' }, { name = 'c1', clock = '1.2GHz' }, \
                 { name = 'c2', clock = '1.2GHz' }, { name = 'c3', clock = '1.2GHz' }]";
    small_device(name, ftl)
        .set("controller.cores", cores)
        .and_then(|c| c.set("architecture.kind", kind))
        .unwrap_or_else(|e| panic!("{name} on {kind}: {e}"))
}
