//! # ssdlab-sim: the virtual-time runtime under every ssdlab firmware
//!
//! Firmware in ssdlab is ordinary async Rust. A request handler is one straight-line function
//! that awaits what a real controller waits for — flash, DMA, a lock, CPU time — and this crate
//! runs those functions deterministically in virtual time on simulated controller cores.
//!
//! ```text
//!   host / hardware tasks (CoreId::UNBOUND)        controller cores (one task at a time each)
//!   ┌──────────────┐   Ring (cost + IPI)   ┌────────────┐   Ring   ┌────────────┐
//!   │ NVMe driver  │ ────────────────────▶ │ core 0 FTL │ ───────▶ │ core 1 FIL │ ─▶ flash
//!   └──────────────┘                       └────────────┘ ◀─────── └────────────┘    model
//!                                                  oneshot completions
//! ```
//!
//! This crate knows nothing about SSDs: it provides time, cores, tasks, primitives, one RNG and
//! statistics. The layers above (`nand`, `firmware`, `host`) give them meaning.
//!
//! ## The model
//!
//! * **Virtual time** is integer nanoseconds ([`SimTime`], [`SimDuration`]). Nothing reads a wall
//!   clock; a run is a pure function of (configuration, workload, seed).
//! * **Cores** ([`CoreId`], [`CoreSpec`]): a task is spawned on a core; a core runs one task at a
//!   time, non-preemptively. [`Cx::compute`] keeps the core busy for `cycles / clock`, so other
//!   tasks on that core wait; any other suspension frees the core. Taking a core costs its
//!   context-switch cycles. Tasks on [`CoreId::UNBOUND`] model hardware and the host.
//! * **Primitives**: [`Cx::sleep`], oneshot completions ([`sync::oneshot`]), wait queues
//!   ([`sync::Notify`]), coroutine mutexes with FIFO hand-off ([`sync::Mutex`]) and bounded
//!   rings between cores with enqueue cost and notification latency ([`sync::Ring`]).
//! * **Randomness**: one seeded RNG per simulation, reached through [`Cx::with_rng`].
//! * **Statistics**: [`stats::Counter`], [`stats::Histogram`], [`stats::TimeSeries`].
//!
//! ## Ordering rules
//!
//! 1. Timers fire in order of their instant; ties in the order they were set.
//! 2. At an instant, all timers due fire before the tasks they wake run; woken tasks run in the
//!    order they were woken.
//! 3. Tasks waiting for a busy core take it in FIFO order.
//!
//! ## Deadlocks are reported, not hung
//!
//! If foreground tasks remain but no timer is pending, [`Sim::run`] returns a [`Deadlock`]
//! listing every task and what it waits on (`mutex 'gtd' held by task 'worker-3'`). Service
//! loops that legitimately wait forever are spawned as daemons ([`Cx::spawn_daemon`]).
//!
//! ## Example
//!
//! ```
//! use sim::{CoreSpec, Frequency, Sim, SimTime};
//!
//! let sim = Sim::new(7);
//! let core = sim.add_core(CoreSpec::new("ftl", Frequency::mhz(1000)));
//! let cx = sim.cx();
//! for i in 0..2 {
//!     let cx2 = cx.clone();
//!     cx.spawn(core, format!("worker-{i}"), async move {
//!         cx2.compute(1_000).await; // 1 us on a 1 GHz core; the other worker waits
//!     });
//! }
//! sim.run().unwrap();
//! assert_eq!(sim.now(), SimTime::from_nanos(2_000));
//! ```

pub mod config;
pub mod core;
mod cx;
pub mod deadlock;
mod executor;
pub mod join;
pub mod rng;
pub mod stats;
pub mod sync;
mod task;
pub mod time;
mod timers;
pub mod trace;
pub mod units;
mod waker;

pub use crate::config::ConfigError;
pub use crate::core::{CoreId, CoreSpec, CoreStats};
pub use cx::{Compute, Cx, JoinHandle, Migrate, Role, Sleep, YieldNow};
pub use deadlock::{BlockedTask, Deadlock};
pub use executor::{Sim, Stop};
pub use join::join_all;
pub use rng::SimRng;
pub use task::{Label, TaskKey, WaitOn};
pub use time::{SimDuration, SimTime};
pub use units::{ByteSize, Frequency, ParseQuantityError};

/// Asks the CPU to bring the cache line holding `x` closer, ahead of a use some work later.
///
/// A hint only: it changes no value and no simulated result, only how long the host waits
/// for memory. The big tables of a full-size device (the mapping table, the unit states) are
/// read at random LPNs, each read a cache miss; code that knows an address early (GC knows a
/// page's LPNs when its read completes, long before it remaps them) prefetches it then.
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: a prefetch reads nothing architecturally and cannot fault; `x` is a valid
    // reference anyway.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((x as *const T).cast());
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = x;
}
