//! FIL throughput: simulated flash transactions per wall-clock second.
//!
//! A closed loop keeps 256 reads (or programs) outstanding over a 64-die array (8 channels x
//! 4 ways x 2 dies) with zero firmware costs, so the measurement is the FIL engine, the NAND
//! model and the executor.
//!
//! Run: `cargo bench -p ssdlab-firmware --bench fil`. Criterion reports elements (transactions)/s.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use firmware::fil::{Fil, FilConfig, FlashRequest, PageWrite, TxnSource};
use nand::store::MetaStore;
use nand::{FlashArray, Geometry, Oob, PageIdx, Timing};
use rand::{RngExt, SeedableRng};
use sim::{ByteSize, CoreId, CoreSpec, Frequency, Sim, SimRng};

const TXNS: u64 = 200_000;
const QD: u64 = 256;

fn geometry() -> Geometry {
    Geometry {
        channels: 8,
        ways: 4,
        dies: 2,
        planes: 2,
        blocks: 64,
        pages: 256,
        page_size: ByteSize::kib(16),
        oob_size: ByteSize(1872),
        mapping_unit: ByteSize::kib(4),
    }
}

fn run(program: bool) -> u64 {
    let geo = geometry();
    let sim = Sim::new(7);
    let core = sim.add_core(CoreSpec::new("fil", Frequency::mhz(500)));
    let timing = Timing::default().model(geo.page_bytes(), geo.oob_size.bytes() as u32);
    let mut array = FlashArray::new(geo.clone(), Box::new(MetaStore::new(&geo)));
    let upp = geo.units_per_page() as usize;
    let slots = Oob::empty(upp as u32);
    if !program {
        for b in 0..geo.total_blocks() {
            array.program(geo.page_of(nand::BlockIdx(b), 0), &slots, None).unwrap();
        }
    }
    let fil = Fil::start(&sim.cx(), core, &FilConfig::default(), timing, Rc::new(RefCell::new(array)));
    let cx = sim.cx();
    let next = Rc::new(Cell::new(0u64));
    let rng = Rc::new(RefCell::new(SimRng::seed_from_u64(1)));
    let write_ptr = Rc::new(RefCell::new(vec![0u32; geo.total_blocks() as usize]));
    for w in 0..QD {
        let (fil, next, rng, wp, geo) =
            (fil.clone(), next.clone(), rng.clone(), write_ptr.clone(), geo.clone());
        cx.spawn(CoreId::UNBOUND, format!("issuer-{w}"), async move {
            loop {
                let i = next.get();
                if i >= TXNS {
                    break;
                }
                next.set(i + 1);
                let block = rng.borrow_mut().random_range(0..geo.total_blocks());
                let req = if program {
                    let mut wp = wp.borrow_mut();
                    let mut b = block;
                    while wp[b as usize] == geo.pages {
                        b = (b + 1) % geo.total_blocks(); // full: take the next block
                    }
                    let page = wp[b as usize];
                    wp[b as usize] += 1;
                    let p = geo.page_of(nand::BlockIdx(b), page);
                    FlashRequest::program(
                        TxnSource::User,
                        p,
                        PageWrite { oob: Oob::empty(upp as u32), data: None },
                    )
                } else {
                    FlashRequest::read(TxnSource::User, PageIdx(block * geo.pages))
                };
                fil.submit(req).await;
            }
        });
    }
    sim.run().unwrap();
    if std::env::var_os("FIL_BENCH_EVENTS").is_some() {
        let st = fil.stats();
        eprintln!("events per txn: {:.2}", sim.events() as f64 / (st.read.count + st.program.count) as f64);
    }
    let st = fil.stats();
    st.read.count + st.program.count
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("fil");
    g.sample_size(10);
    g.throughput(Throughput::Elements(run(false)));
    g.bench_function("random_reads_qd256", |b| b.iter(|| run(false)));
    g.throughput(Throughput::Elements(run(true)));
    g.bench_function("random_programs_qd256", |b| b.iter(|| run(true)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
