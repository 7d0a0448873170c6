//! Executor throughput: events processed per wall-clock second.
//!
//! * `bare_timers`: 1,000 tasks each sleeping 1,000 random intervals (a timer heap ~1,000 deep).
//! * `ping_pong_cores`: two tasks on two cores exchanging messages through rings with enqueue
//!   cost and IPI latency, computing between messages (sleep/wake pairs across cores).
//!
//! Run: `cargo bench -p ssdlab-sim --bench executor`. Criterion reports elements (events) / s.

use std::hint::black_box;
use std::rc::Rc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::Rng;
use sim::sync::{Ring, RingSpec};
use sim::{CoreId, CoreSpec, Frequency, Sim, SimDuration};

fn bare_timers() -> u64 {
    let sim = Sim::new(1);
    let cx = sim.cx();
    for t in 0..1_000 {
        let c = cx.clone();
        cx.spawn(CoreId::UNBOUND, "sleeper", async move {
            let _ = t;
            for _ in 0..1_000 {
                let d = c.with_rng(|g| g.next_u64() % 10_000);
                c.sleep(SimDuration::from_nanos(d + 1)).await;
            }
        });
    }
    sim.run().unwrap();
    sim.events()
}

fn ping_pong(rounds: u32) -> u64 {
    let sim = Sim::new(1);
    let a = sim.add_core(CoreSpec::new("a", Frequency::mhz(1000)));
    let b = sim.add_core(CoreSpec::new("b", Frequency::mhz(1000)));
    let cx = sim.cx();
    let spec = RingSpec { capacity: 16, enqueue_cycles: 20, notify_latency: SimDuration::from_nanos(300) };
    let ab = Rc::new(Ring::new(&cx, "ab", spec.clone()));
    let ba = Rc::new(Ring::new(&cx, "ba", spec));
    let (c, tx, rx) = (cx.clone(), ab.clone(), ba.clone());
    cx.spawn(a, "ping", async move {
        for i in 0..rounds {
            tx.push(i).await;
            let v = rx.pop().await.unwrap();
            c.compute(100).await;
            black_box(v);
        }
    });
    let c = cx.clone();
    cx.spawn_daemon(b, "pong", async move {
        while let Some(v) = ab.pop().await {
            c.compute(100).await;
            ba.push(v).await;
        }
    });
    sim.run().unwrap();
    sim.events()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("executor");
    g.sample_size(10);
    g.throughput(Throughput::Elements(bare_timers()));
    g.bench_function("bare_timers", |b| b.iter(bare_timers));
    g.throughput(Throughput::Elements(ping_pong(100_000)));
    g.bench_function("ping_pong_cores", |b| b.iter(|| ping_pong(100_000)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
