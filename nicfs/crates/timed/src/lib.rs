//! NICFS in virtual time: the same file-system code, with time charged in a model.
//!
//! The functional NICFS (FUSE, real processes, crash images) emulates its SmartNIC with
//! threads on the host's cores, so the speed it shows is this machine's. Here the front ends
//! and the back end's four stages run as tasks of ssdlab's `sim` runtime, the one the SSD
//! firmware runs on (a SmartNIC is one more controller with weak cores):
//!
//! ```text
//!  host cores (one per front end)      NIC cores (8, 2 GHz, 2 cycles per host cycle)
//!  ┌──────────────┐                    ┌─ fetch ─▶ locate ─▶ merge ─▶ patch ─┐ per front end
//!  │ front end f  │ log (PM)           │  rings between stages (2 batches)     │ engine lock
//!  └──────┬───────┘                    └───────────────┬──────────────────────┘
//!         │ loads/stores                                │ DMA (PCIe link)      host copy
//!         ▼                                             ▼                      engine
//!  ═════════════ PM: shared read and write channels, latencies, fences ═════════════════
//! ```
//!
//! Every PM access the real code makes goes through a metering view ([`meter::MeterPm`]) that
//! counts it for its agent (host, NIC, copy engine); a task runs one step of real code, takes
//! the counts and charges their time on the shared devices ([`devices::Devices`]) plus the
//! step's CPU cycles ([`config::CpuCosts`]). Results are deterministic: a run is a function of
//! the configuration, the workload and the seed, never of this machine's cores or clock.
//!
//! Baselines run in the same model: an in-place library file system on the same PM
//! ([`inplace`]), and kernel-style Ext4-DAX and Ext4 ([`kernel`]), which pay a system call
//! and VFS per call, journal metadata jbd2-style and checkpoint it. [`figures`] runs the
//! paper's figure set.
//!
//! Modelling rules and limits:
//! 1. A step's effects happen when it starts; its time is charged after (see [`nicfs`]).
//! 2. Host metadata reads (at most 128 bytes) may hit a modelled LLC; file data is always
//!    read from PM, as if the working set were larger than the LLC.
//! 3. Optane's 256-byte internal write granularity (write amplification of small random
//!    writes) is not modelled; neither are DDIO or CPU cache evictions.

pub mod calibrate;
pub mod config;
pub mod devices;
pub mod figures;
pub mod inplace;
pub mod kernel;
pub mod meter;
pub mod nicfs;
pub mod study;

pub use config::{PatchLock, TimedConfig, TimedConfigError};
pub use nicfs::{NicfsMachine, NicfsSetup};
pub use study::{Access, Pattern, Phase, PhaseResult};
