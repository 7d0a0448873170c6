//! Cores run one task at a time; compute holds the core; other waits free it.

use std::cell::RefCell;
use std::rc::Rc;

use sim::{CoreId, CoreSpec, Frequency, Sim, SimDuration, SimTime};

#[test]
fn compute_serialises_tasks_on_one_core_but_not_across_cores() {
    let sim = Sim::new(0);
    let a = sim.add_core(CoreSpec::new("a", Frequency::mhz(1000)));
    let b = sim.add_core(CoreSpec::new("b", Frequency::mhz(500)));
    let cx = sim.cx();
    let ends = Rc::new(RefCell::new(Vec::new()));
    for (i, core) in [(0, a), (1, a), (2, b)] {
        let (c, e) = (cx.clone(), ends.clone());
        cx.spawn(core, format!("t{i}"), async move {
            c.compute(1_000).await;
            e.borrow_mut().push((i, c.now().as_nanos()));
        });
    }
    sim.run().unwrap();
    // t0 and t1 share 1 GHz core a (1 us each, serialised); t2 runs on 500 MHz core b (2 us).
    // t1 and t2 end at the same instant; t2's timer was set first (at t=0), so it fires first.
    assert_eq!(*ends.borrow(), vec![(0, 1_000), (2, 2_000), (1, 2_000)]);
    let stats = sim.core_stats();
    assert_eq!(stats[0].busy, SimDuration::from_micros(2));
    assert_eq!(stats[1].busy, SimDuration::from_micros(2));
    assert_eq!(stats[0].max_run_queue, 1);
}

/// Zero cycles take no time and do not yield: the task keeps running in the same poll (the
/// other task on the core, woken at the same instant, runs after it), and the core is charged
/// nothing. Most presets leave firmware costs at zero, so this is the common case.
#[test]
fn zero_cycle_compute_neither_yields_nor_charges_the_core() {
    let sim = Sim::new(0);
    let core = sim.add_core(CoreSpec::new("ftl", Frequency::mhz(1000)));
    let cx = sim.cx();
    let order = Rc::new(RefCell::new(Vec::new()));
    for name in ["t0", "t1"] {
        let (c, o) = (cx.clone(), order.clone());
        cx.spawn(core, name, async move {
            o.borrow_mut().push((name, "before"));
            c.compute(0).await;
            o.borrow_mut().push((name, "after"));
        });
    }
    sim.run().unwrap();
    assert_eq!(*order.borrow(), vec![("t0", "before"), ("t0", "after"), ("t1", "before"), ("t1", "after")]);
    assert_eq!(sim.now(), SimTime::ZERO);
    assert_eq!(sim.core_stats()[0].busy, SimDuration::ZERO);
}

#[test]
#[should_panic(expected = "compute(cycles) on an unbound task")]
fn zero_cycle_compute_on_an_unbound_task_still_panics() {
    let sim = Sim::new(0);
    let cx = sim.cx();
    let c = cx.clone();
    cx.spawn(CoreId::UNBOUND, "unbound", async move { c.compute(0).await });
    let _ = sim.run();
}

#[test]
fn waiting_on_io_frees_the_core() {
    // t0 computes 1 us, then waits 10 us on "flash" (a sleep), then computes 1 us.
    // t1 computes 1 us and can use the core while t0 waits.
    let sim = Sim::new(0);
    let core = sim.add_core(CoreSpec::new("ftl", Frequency::mhz(1000)));
    let cx = sim.cx();
    let ends = Rc::new(RefCell::new(Vec::new()));
    let (c, e) = (cx.clone(), ends.clone());
    cx.spawn(core, "t0", async move {
        c.compute(1_000).await;
        c.sleep(SimDuration::from_micros(10)).await;
        c.compute(1_000).await;
        e.borrow_mut().push(("t0", c.now().as_nanos()));
    });
    let (c, e) = (cx.clone(), ends.clone());
    cx.spawn(core, "t1", async move {
        c.compute(1_000).await;
        e.borrow_mut().push(("t1", c.now().as_nanos()));
    });
    sim.run().unwrap();
    assert_eq!(*ends.borrow(), vec![("t1", 2_000), ("t0", 12_000)]);
}

#[test]
fn a_task_woken_while_its_core_computes_waits_its_turn() {
    let sim = Sim::new(0);
    let core = sim.add_core(CoreSpec::new("ftl", Frequency::mhz(1000)));
    let cx = sim.cx();
    let seen = Rc::new(RefCell::new(None));
    let (c, s) = (cx.clone(), seen.clone());
    cx.spawn(core, "sleeper", async move {
        c.sleep(SimDuration::from_nanos(100)).await; // due at 100, but the core is busy
        *s.borrow_mut() = Some(c.now());
    });
    let c = cx.clone();
    cx.spawn(core, "hog", async move { c.compute(5_000).await });
    sim.run().unwrap();
    assert_eq!(*seen.borrow(), Some(SimTime::from_nanos(5_000)));
}

#[test]
fn context_switch_cost_is_charged_when_a_task_takes_the_core() {
    let sim = Sim::new(0);
    let spec = CoreSpec { name: "a53".into(), clock: Frequency::mhz(1000), switch_cycles: 200 };
    let core = sim.add_core(spec);
    let cx = sim.cx();
    let ends = Rc::new(RefCell::new(Vec::new()));
    for i in 0..2 {
        let (c, e) = (cx.clone(), ends.clone());
        cx.spawn(core, format!("t{i}"), async move {
            c.compute(1_000).await;
            e.borrow_mut().push(c.now().as_nanos());
        });
    }
    sim.run().unwrap();
    // Each task: 200 ns switch + 1000 ns compute, one after the other.
    assert_eq!(*ends.borrow(), vec![1_200, 2_400]);
    let st = &sim.core_stats()[0];
    assert_eq!(st.busy, SimDuration::from_nanos(2_400));
    assert_eq!(st.switches, 2);
}

#[test]
fn unbound_tasks_never_wait_for_a_core() {
    let sim = Sim::new(0);
    let cx = sim.cx();
    let ends = Rc::new(RefCell::new(Vec::new()));
    for i in 0..3 {
        let (c, e) = (cx.clone(), ends.clone());
        cx.spawn(CoreId::UNBOUND, format!("hw{i}"), async move {
            c.compute_for(SimDuration::from_nanos(300)).await;
            e.borrow_mut().push(c.now().as_nanos());
        });
    }
    sim.run().unwrap();
    assert_eq!(*ends.borrow(), vec![300, 300, 300]);
}

#[test]
fn busy_time_is_split_by_the_role_the_task_declared() {
    let sim = Sim::new(1);
    let core = sim.add_core(CoreSpec::new("ftl", Frequency::mhz(1000)));
    let other = sim.add_core(CoreSpec::new("post", Frequency::mhz(1000)));
    let cx = sim.cx();
    let c = cx.clone();
    cx.spawn(core, "request", async move {
        c.compute(100).await; // role "other" until one is set
        let (fetch, ftl) = (c.role("fetch"), c.role("ftl"));
        assert_eq!(c.role("fetch"), fetch, "a name always gives the same role");
        c.set_role(fetch);
        c.compute(200).await;
        c.set_role(ftl);
        c.compute(300).await;
        c.migrate(other, SimDuration::from_nanos(50)).await; // the role travels with the task
        c.compute(400).await;
    });
    sim.run().unwrap();
    let stats = sim.core_stats();
    let by_role = |i: usize| -> Vec<(String, u64)> {
        stats[i].by_role.iter().map(|(r, d)| (r.clone(), d.as_nanos())).collect()
    };
    assert_eq!(by_role(0), vec![("other".into(), 100), ("fetch".into(), 200), ("ftl".into(), 300)]);
    assert_eq!(by_role(1), vec![("ftl".into(), 400)]);
    assert_eq!(sim.now(), SimTime::from_nanos(1_050));
}
