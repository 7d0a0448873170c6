//! Events are ordered by (time, insertion sequence); wakes at an instant run in wake order.

use std::cell::RefCell;
use std::rc::Rc;

use sim::{CoreId, Sim, SimDuration, SimTime, Stop};

fn log() -> Rc<RefCell<Vec<(u64, &'static str)>>> {
    Rc::new(RefCell::new(Vec::new()))
}

#[test]
fn same_instant_timers_fire_in_the_order_they_were_set() {
    let sim = Sim::new(0);
    let cx = sim.cx();
    let out = log();
    // Spawned in this order, each sleeps until t=100: they must run in spawn order.
    for name in ["a", "b", "c", "d"] {
        let (cx2, out) = (cx.clone(), out.clone());
        cx.spawn(CoreId::UNBOUND, name, async move {
            cx2.sleep_until(SimTime::from_nanos(100)).await;
            out.borrow_mut().push((cx2.now().as_nanos(), name));
        });
    }
    // An earlier timer set later still fires first.
    let (cx2, o) = (cx.clone(), out.clone());
    cx.spawn(CoreId::UNBOUND, "early", async move {
        cx2.sleep_until(SimTime::from_nanos(50)).await;
        o.borrow_mut().push((cx2.now().as_nanos(), "early"));
    });
    assert_eq!(sim.run().unwrap(), Stop::Idle);
    assert_eq!(*out.borrow(), vec![(50, "early"), (100, "a"), (100, "b"), (100, "c"), (100, "d")]);
}

#[test]
fn timers_due_at_an_instant_fire_before_tasks_they_wake() {
    // Task x wakes at t=10 and notifies y; task z's timer is also due at t=10 but was set
    // after x's. Rule 2: both timers fire before any woken task runs, so z runs before y.
    let sim = Sim::new(0);
    let cx = sim.cx();
    let out = log();
    let n = Rc::new(sim::sync::Notify::new(&cx, "n"));
    let (c, o, n1) = (cx.clone(), out.clone(), n.clone());
    cx.spawn(CoreId::UNBOUND, "y", async move {
        n1.notified().await;
        o.borrow_mut().push((c.now().as_nanos(), "y"));
    });
    let (c, o) = (cx.clone(), out.clone());
    cx.spawn(CoreId::UNBOUND, "x", async move {
        c.sleep_until(SimTime::from_nanos(10)).await;
        o.borrow_mut().push((c.now().as_nanos(), "x"));
        n.notify_one();
    });
    let (c, o) = (cx.clone(), out.clone());
    cx.spawn(CoreId::UNBOUND, "z", async move {
        c.sleep_until(SimTime::from_nanos(10)).await;
        o.borrow_mut().push((c.now().as_nanos(), "z"));
    });
    sim.run().unwrap();
    assert_eq!(*out.borrow(), vec![(10, "x"), (10, "z"), (10, "y")]);
}

#[test]
fn run_until_stops_at_the_limit_and_resumes() {
    let sim = Sim::new(0);
    let cx = sim.cx();
    let c = cx.clone();
    let done = Rc::new(RefCell::new(false));
    let d = done.clone();
    cx.spawn(CoreId::UNBOUND, "long", async move {
        c.sleep(SimDuration::from_micros(10)).await;
        *d.borrow_mut() = true;
    });
    assert_eq!(sim.run_until(SimTime::from_nanos(4_000)).unwrap(), Stop::TimeLimit);
    assert_eq!(sim.now(), SimTime::from_nanos(4_000));
    assert!(!*done.borrow());
    assert_eq!(sim.run().unwrap(), Stop::Idle);
    assert_eq!(sim.now(), SimTime::from_nanos(10_000));
    assert!(*done.borrow());
}

#[test]
fn run_through_keeps_the_clock_going_when_idle_and_fires_daemon_timers() {
    let sim = Sim::new(0);
    let cx = sim.cx();
    let c = cx.clone();
    let ticks = Rc::new(RefCell::new(Vec::new()));
    let t = ticks.clone();
    cx.spawn_daemon(CoreId::UNBOUND, "ticker", async move {
        loop {
            c.sleep(SimDuration::from_micros(3)).await;
            t.borrow_mut().push(c.now().as_nanos());
        }
    });
    // run_until stops at once: nothing in the foreground.
    assert_eq!(sim.run_until(SimTime::from_nanos(10_000)).unwrap(), Stop::Idle);
    assert_eq!(sim.now(), SimTime::ZERO);
    assert_eq!(sim.next_timer(), Some(SimTime::from_nanos(3_000)));
    // run_through gets there, firing the daemon's timers on the way.
    assert_eq!(sim.run_through(SimTime::from_nanos(10_000)).unwrap(), Stop::TimeLimit);
    assert_eq!(sim.now(), SimTime::from_nanos(10_000));
    assert_eq!(*ticks.borrow(), vec![3_000, 6_000, 9_000]);
    assert_eq!(sim.next_timer(), Some(SimTime::from_nanos(12_000)));
    // A foreground task started now runs from now.
    let c = cx.clone();
    let at = Rc::new(RefCell::new(0));
    let a = at.clone();
    cx.spawn(CoreId::UNBOUND, "request", async move {
        c.sleep(SimDuration::from_micros(1)).await;
        *a.borrow_mut() = c.now().as_nanos();
    });
    assert_eq!(sim.run_through(SimTime::from_nanos(20_000)).unwrap(), Stop::TimeLimit);
    assert_eq!(*at.borrow(), 11_000);
}

#[test]
fn run_slice_skips_idle_time_to_the_next_timer_and_fires_it_on_time() {
    let sim = Sim::new(0);
    let cx = sim.cx();
    let c = cx.clone();
    let woke = Rc::new(RefCell::new(Vec::new()));
    let w = woke.clone();
    let far = SimTime::ZERO + SimDuration::from_secs(100_000_000);
    cx.spawn(CoreId::UNBOUND, "sleeper", async move {
        c.sleep(SimDuration::from_micros(1)).await;
        w.borrow_mut().push(c.now());
        c.sleep_until(far).await;
        w.borrow_mut().push(c.now());
        c.sleep(SimDuration::from_micros(7)).await;
        w.borrow_mut().push(c.now());
    });
    let slice = SimDuration::from_millis(5);
    // Busy at first: a whole slice, as run_until would.
    assert_eq!(sim.run_slice(slice).unwrap(), Stop::TimeLimit);
    assert_eq!(sim.now(), SimTime::ZERO + slice);
    assert_eq!(*woke.borrow(), vec![SimTime::ZERO + SimDuration::from_micros(1)]);
    // Idle until `far`: one call gets there and fires the timer at its instant, not later.
    assert_eq!(sim.run_slice(slice).unwrap(), Stop::TimeLimit);
    assert_eq!(sim.now(), far);
    assert_eq!(woke.borrow()[1], far);
    // Then a slice again: the next timer is within it.
    assert_eq!(sim.run_slice(slice).unwrap(), Stop::Idle);
    assert_eq!(woke.borrow()[2], far + SimDuration::from_micros(7));
}

#[test]
fn daemons_do_not_keep_a_run_going_or_count_as_deadlock() {
    let sim = Sim::new(0);
    let cx = sim.cx();
    let ring = Rc::new(sim::sync::Ring::<u32>::new(&cx, "inbox", Default::default()));
    let r = ring.clone();
    let served = Rc::new(RefCell::new(0));
    let s = served.clone();
    cx.spawn_daemon(CoreId::UNBOUND, "server", async move {
        while let Some(v) = r.pop().await {
            *s.borrow_mut() += v;
        }
    });
    let c = cx.clone();
    cx.spawn(CoreId::UNBOUND, "client", async move {
        for v in 1..=3 {
            ring.push(v).await;
            c.sleep(SimDuration::from_nanos(5)).await;
        }
    });
    assert_eq!(sim.run().unwrap(), Stop::Idle);
    assert_eq!(*served.borrow(), 6);
}

#[test]
fn deadlock_report_names_each_waiting_task() {
    let sim = Sim::new(0);
    let cx = sim.cx();
    let ring = Rc::new(sim::sync::Ring::<u32>::new(&cx, "used ring", Default::default()));
    cx.spawn(CoreId::UNBOUND, "worker-0", async move { ring.pop().await });
    let (tx, rx) = sim::sync::oneshot::channel::<()>(&cx, "flash read");
    cx.spawn(CoreId::UNBOUND, "worker-1", rx);
    let err = sim.run().unwrap_err();
    drop(tx);
    let text = err.to_string();
    assert!(text.starts_with("deadlock at t=0ns"), "{text}");
    assert!(
        text.contains("task 'worker-0' on core 'unbound' waits on an item from ring 'used ring'"),
        "{text}"
    );
    assert!(text.contains("task 'worker-1' on core 'unbound' waits on oneshot 'flash read'"), "{text}");
    assert_eq!(err.tasks.len(), 2);
}

/// A sampler that wakes on a timer forever (a watcher) neither keeps a run going nor hides a
/// deadlock behind its ticks: with a daemon's ticking timer instead, the same wait would run
/// the clock on forever (issue 26: a stuck replay sat at 100% CPU instead of failing).
#[test]
fn a_watchers_timers_do_not_hide_a_deadlock() {
    let sim = Sim::new(0);
    let cx = sim.cx();
    let c = cx.clone();
    let ticks = Rc::new(RefCell::new(0u32));
    let t = ticks.clone();
    cx.spawn_watcher(CoreId::UNBOUND, "sampler", async move {
        loop {
            c.sleep(SimDuration::from_micros(5)).await;
            *t.borrow_mut() += 1;
        }
    });
    let (tx, rx) = sim::sync::oneshot::channel::<()>(&cx, "never sent");
    let c = cx.clone();
    cx.spawn(CoreId::UNBOUND, "stuck", async move {
        c.sleep(SimDuration::from_micros(12)).await;
        rx.await
    });
    let err = sim.run_until(SimTime::from_nanos(1_000_000)).unwrap_err();
    drop(tx);
    assert_eq!(err.at, SimTime::from_nanos(12_000), "found when the last foreground task waits");
    assert_eq!(*ticks.borrow(), 2, "the sampler ran meanwhile");
    assert!(
        err.to_string().contains("task 'stuck' on core 'unbound' waits on oneshot 'never sent'"),
        "{err}"
    );

    // With nothing stuck, the watcher's timers do not keep the run from ending.
    let sim = Sim::new(0);
    let cx = sim.cx();
    let c = cx.clone();
    cx.spawn_watcher(CoreId::UNBOUND, "sampler", async move {
        loop {
            c.sleep(SimDuration::from_micros(5)).await;
        }
    });
    let c = cx.clone();
    cx.spawn(CoreId::UNBOUND, "work", async move { c.sleep(SimDuration::from_micros(12)).await });
    assert_eq!(sim.run().unwrap(), Stop::Idle);
    assert_eq!(sim.now(), SimTime::from_nanos(12_000));
}

#[test]
fn stale_timers_do_not_wake_a_new_task_in_a_reused_slot() {
    // A task that finishes while a timer it set is still pending must not have that timer
    // reach the next task placed in its slot: that task waits for its own, later timer.
    let sim = Sim::new(0);
    let cx = sim.cx();
    let c = cx.clone();
    cx.spawn(CoreId::UNBOUND, "short", async move {
        let mut long = Box::pin(c.sleep(SimDuration::from_nanos(100)));
        // Poll the long sleep once (setting its timer), then drop it and finish.
        let _ = futures_poll_once(long.as_mut()).await;
    });
    sim.run().unwrap();
    let c = cx.clone();
    let woke_at = sim
        .block_on(async move {
            c.sleep_until(SimTime::from_nanos(500)).await;
            c.now()
        })
        .unwrap();
    assert_eq!(woke_at, SimTime::from_nanos(500));
}

/// Polls a future once and reports whether it completed.
async fn futures_poll_once<F: std::future::Future + Unpin>(mut f: F) -> bool {
    std::future::poll_fn(move |cx| std::task::Poll::Ready(std::pin::Pin::new(&mut f).poll(cx).is_ready()))
        .await
}
