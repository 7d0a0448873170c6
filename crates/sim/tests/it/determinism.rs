//! Same seed -> identical statistics; different seed -> different ones.

use std::cell::RefCell;
use std::rc::Rc;

use rand::Rng;
use sim::stats::Histogram;
use sim::sync::{Mutex, Ring, RingSpec};
use sim::{CoreId, CoreSpec, Frequency, Sim, SimDuration};

/// A small random system: producers on two cores push jobs of random cost through a ring to a
/// consumer that holds a mutex for a random time. Returns its latency histogram summary, the
/// core statistics and the final time, as one comparable string.
fn scenario(seed: u64) -> String {
    let sim = Sim::new(seed);
    let cores = [
        sim.add_core(CoreSpec { name: "c0".into(), clock: Frequency::mhz(800), switch_cycles: 30 }),
        sim.add_core(CoreSpec::new("c1", Frequency::mhz(1200))),
    ];
    let cx = sim.cx();
    let spec = RingSpec { capacity: 8, enqueue_cycles: 50, notify_latency: SimDuration::from_nanos(120) };
    let ring = Rc::new(Ring::new(&cx, "jobs", spec));
    let lock = Rc::new(Mutex::new(&cx, "state", 0u64));
    let hist = Rc::new(RefCell::new(Histogram::new()));
    let producers: Vec<_> = (0..6)
        .map(|p| {
            let (c, r) = (cx.clone(), ring.clone());
            cx.spawn(cores[p % 2], format!("producer-{p}"), async move {
                for _ in 0..200 {
                    let cost = c.with_rng(|g| g.next_u64() % 5_000);
                    c.compute(cost).await;
                    r.push(Some(c.now())).await;
                }
            })
        })
        .collect();
    let r = ring.clone();
    cx.spawn(CoreId::UNBOUND, "closer", async move {
        for p in producers {
            p.await;
        }
        for _ in 0..3 {
            r.push(None).await; // one end marker per consumer
        }
    });
    for w in 0..3 {
        let (c, r, l, h) = (cx.clone(), ring.clone(), lock.clone(), hist.clone());
        cx.spawn(CoreId::UNBOUND, format!("consumer-{w}"), async move {
            while let Some(Some(t0)) = r.pop().await {
                let mut g = l.lock().await;
                let hold = c.with_rng(|g| g.next_u64() % 700);
                c.sleep(SimDuration::from_nanos(hold)).await;
                *g += 1;
                h.borrow_mut().record_duration(c.now().since(t0));
            }
        });
    }
    sim.run().unwrap();
    let s = hist.borrow().summary();
    format!("{s:?} {:?} {:?} {} {:?}", sim.core_stats(), lock.stats(), sim.now(), sim.events())
}

#[test]
#[cfg_attr(miri, ignore = "slow under Miri (minutes): whole runs; the cores tests take the same paths")]
fn same_seed_gives_identical_statistics() {
    let a = scenario(1234);
    let b = scenario(1234);
    assert_eq!(a, b);
    assert!(a.contains("count: 1200"), "{a}");
}

#[test]
#[cfg_attr(miri, ignore = "slow under Miri (minutes): whole runs; the cores tests take the same paths")]
fn a_different_seed_gives_different_statistics() {
    assert_ne!(scenario(1), scenario(2));
}
