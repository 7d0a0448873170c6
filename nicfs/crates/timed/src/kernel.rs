//! Kernel-style baselines in the model: what Ext4-DAX and Ext4 (on a PM block device) do per
//! call, charged on the same devices as NICFS. They are cost models, not file systems: they
//! keep only what decides the cost (which blocks are allocated, the file size, the page cache,
//! how full the journal is) and move no data.
//!
//! Every call is durable on return, as NICFS's are (O_DSYNC semantics), so the comparison is
//! between equally strong promises:
//!
//! * **Ext4-DAX**: system call + VFS; a write that allocates pays block allocation; data is
//!   stored in place with non-temporal stores and fenced; if the write allocated or grew the
//!   file, a jbd2 commit follows (descriptor block, the changed metadata blocks, each a whole
//!   4 KiB block, flush, fence, commit block, flush, fence) under the journal lock. Reads copy
//!   from PM. A write that only overwrites changes no metadata that O_DSYNC must persist
//!   (mtime alone is not waited for), so it journals nothing.
//! * **Ext4** (page cache over a PM block device): system call + VFS; a partial write of a
//!   page not in the page cache reads it in first (block layer + 4 KiB from PM); the bytes are
//!   copied into DRAM; then `fdatasync` writes each dirty page back (block layer + 4 KiB to PM,
//!   fenced), allocating delayed blocks, and commits the journal as above when metadata
//!   changed. Reads are served from the page cache, or read a page in. Caches are dropped
//!   before every phase (as benchmarks do), so each phase starts cold.
//!
//! * **Ext4-DAX as mounted by default** ([`Kind::DaxDefault`]): as Ext4-DAX, but nothing
//!   waits for the journal or fences the data; the 5 s commits run in the background.
//!
//! Checkpointing: when a quarter of the journal is used, the journaled metadata blocks are
//! written home (4 KiB each, fenced) and the journal is reused. Commits are not grouped across
//! processes (each waits for its own), which costs Ext4 something with several processes; the
//! figures compare them with one.

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

use sim::sync::Mutex as SimMutex;
use sim::{CoreSpec, Cx, Frequency, Sim, SimDuration, SimTime};

use crate::config::TimedConfig;
use crate::devices::Devices;
use crate::meter::Counts;
use crate::study::{Access, Phase, PhaseResult, process_offsets};

const PAGE: u64 = 4096;

/// Which kernel file system.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Ext4 with DAX on PM, every call durable on return (O_DSYNC).
    Dax,
    /// Ext4 with DAX on PM as mounted by default: metadata changes join the running jbd2
    /// transaction, which the journal thread commits every 5 s, off the writer's path (no run
    /// here lasts that long); data is stored with non-temporal stores and not fenced. Calls
    /// are not durable on return: this is the cheaper promise, not NICFS's.
    DaxDefault,
    /// Ext4 on a PM block device through the page cache, every call durable on return
    /// (`fdatasync` after each write).
    PageCache,
}

/// One process's file, as far as the cost is concerned.
#[derive(Default)]
struct File {
    allocated: Vec<bool>,
    size: u64,
    cached: HashSet<u64>,
}

/// The journal: blocks used since the last checkpoint, and which files have metadata in it.
#[derive(Default)]
struct Journal {
    used: u64,
    files: HashSet<usize>,
}

/// A kernel file system with one file per process.
pub struct KernelMachine {
    cfg: TimedConfig,
    kind: Kind,
    file_bytes: u64,
    files: Rc<RefCell<Vec<File>>>,
    journal: Rc<RefCell<Journal>>,
}

fn ns(n: u64) -> SimDuration {
    SimDuration::from_nanos(n)
}

impl KernelMachine {
    /// `procs` empty files of up to `file_bytes` each.
    pub fn new(cfg: &TimedConfig, kind: Kind, procs: usize, file_bytes: u64) -> KernelMachine {
        let pages = file_bytes.div_ceil(PAGE) as usize;
        let files = (0..procs).map(|_| File { allocated: vec![false; pages], ..File::default() }).collect();
        KernelMachine {
            cfg: cfg.clone(),
            kind,
            file_bytes,
            files: Rc::new(RefCell::new(files)),
            journal: Rc::default(),
        }
    }

    /// Runs `phase` on every process at once.
    pub fn run(&self, phase: &Phase, seed: u64) -> Result<PhaseResult, String> {
        let sim = Sim::new(seed);
        let cx = sim.cx();
        let dev = Rc::new(Devices::new(&self.cfg));
        let jbd2 = Rc::new(SimMutex::new(&cx, "jbd2", ()));
        let procs = self.files.borrow().len();
        for f in self.files.borrow_mut().iter_mut() {
            f.cached.clear();
        }
        let ends: Rc<RefCell<Vec<SimDuration>>> = Rc::default();
        for p in 0..procs {
            let core =
                sim.add_core(CoreSpec::new(format!("host {p}"), Frequency::mhz(self.cfg.host.clock_mhz)));
            let offs = process_offsets(phase, self.file_bytes, seed, p);
            let k = Call {
                cx: cx.clone(),
                dev: dev.clone(),
                jbd2: jbd2.clone(),
                files: self.files.clone(),
                journal: self.journal.clone(),
                kind: self.kind,
                p,
            };
            let (ends, phase) = (ends.clone(), phase.clone());
            cx.spawn(core, format!("process {p}"), async move {
                for off in offs {
                    match phase.access {
                        Access::Write => k.write(off, phase.size as u64).await,
                        Access::Read => k.read(off, phase.size as u64).await,
                    }
                }
                ends.borrow_mut().push(k.cx.now().saturating_since(SimTime::ZERO));
            });
        }
        sim.run().map_err(|d| d.to_string())?;
        let elapsed = ends.borrow().iter().copied().max().unwrap_or(SimDuration::ZERO);
        let ops = phase.ops * procs as u64;
        Ok(PhaseResult::new(elapsed, ops, ops * phase.size as u64, &sim, &dev))
    }
}

/// One process's calls.
struct Call {
    cx: Cx,
    dev: Rc<Devices>,
    jbd2: Rc<SimMutex<()>>,
    files: Rc<RefCell<Vec<File>>>,
    journal: Rc<RefCell<Journal>>,
    kind: Kind,
    p: usize,
}

impl Call {
    fn k(&self) -> &crate::config::KernelModel {
        &self.dev.cfg.kernel
    }

    async fn cpu(&self, n: u64) {
        self.cx.compute_for(ns(n)).await;
    }

    /// PM accesses on this (host) core: it stalls until they are done.
    async fn pm(&self, c: Counts) {
        let end = self.dev.host_done(self.cx.now(), &c);
        self.cx.compute_for(end.saturating_since(self.cx.now())).await;
    }

    fn pages(off: u64, len: u64) -> std::ops::Range<u64> {
        off / PAGE..(off + len).div_ceil(PAGE)
    }

    async fn write(&self, off: u64, len: u64) {
        let k = self.k().clone();
        self.cpu(k.syscall_ns + k.vfs_write_ns).await;
        let pages = Call::pages(off, len);
        let (allocates, grows) = {
            let files = self.files.borrow();
            let f = &files[self.p];
            (pages.clone().any(|pg| !f.allocated[pg as usize]), off + len > f.size)
        };
        match self.kind {
            Kind::Dax | Kind::DaxDefault => {
                if allocates {
                    self.cpu(k.alloc_ns).await;
                }
                let fences = u64::from(self.kind == Kind::Dax);
                self.pm(Counts { writes: 1, write_bytes: len, fences, ..Counts::default() }).await;
            }
            Kind::PageCache => {
                for pg in pages.clone() {
                    let (cached, allocated) = {
                        let files = self.files.borrow();
                        (files[self.p].cached.contains(&pg), files[self.p].allocated[pg as usize])
                    };
                    let whole = off <= pg * PAGE && off + len >= (pg + 1) * PAGE;
                    if !cached && allocated && !whole {
                        self.read_page_in().await;
                    }
                    self.files.borrow_mut()[self.p].cached.insert(pg);
                }
                let dram = self.dev.cfg.host.dram_mbps;
                self.cpu((len * 1000).div_ceil(dram) + k.fsync_ns).await;
                if allocates {
                    self.cpu(k.alloc_ns).await;
                }
                for _ in pages.clone() {
                    self.cpu(k.bio_ns).await;
                    self.pm(Counts { writes: 1, write_bytes: PAGE, fences: 1, ..Counts::default() }).await;
                }
            }
        }
        {
            let mut files = self.files.borrow_mut();
            let f = &mut files[self.p];
            for pg in pages {
                f.allocated[pg as usize] = true;
            }
            f.size = f.size.max(off + len);
        }
        if (allocates || grows) && self.kind != Kind::DaxDefault {
            self.commit().await;
        }
    }

    /// A jbd2 commit of this file's metadata blocks, then a checkpoint if the journal is a
    /// quarter full.
    async fn commit(&self) {
        let k = self.k().clone();
        let _g = self.jbd2.lock().await;
        self.cpu(k.commit_cpu_ns).await;
        if self.kind == Kind::PageCache {
            self.cpu(2 * k.bio_ns).await;
        }
        // Descriptor + metadata blocks, fence; commit block, fence.
        let blocks = 1 + k.commit_blocks;
        self.pm(Counts { writes: blocks, write_bytes: blocks * PAGE, fences: 1, ..Counts::default() }).await;
        self.pm(Counts { writes: 1, write_bytes: PAGE, fences: 1, ..Counts::default() }).await;
        let checkpoint = {
            let mut j = self.journal.borrow_mut();
            j.used += blocks + 1;
            j.files.insert(self.p);
            if j.used * 4 >= k.journal_blocks {
                let n = j.files.len() as u64 * k.commit_blocks;
                *j = Journal::default();
                Some(n)
            } else {
                None
            }
        };
        if let Some(n) = checkpoint {
            self.pm(Counts { writes: n, write_bytes: n * PAGE, fences: 1, ..Counts::default() }).await;
        }
    }

    async fn read_page_in(&self) {
        self.cpu(self.k().bio_ns).await;
        self.pm(Counts { reads: 1, read_bytes: PAGE, ..Counts::default() }).await;
    }

    async fn read(&self, off: u64, len: u64) {
        let k = self.k().clone();
        self.cpu(k.syscall_ns + k.vfs_read_ns).await;
        let size = self.files.borrow()[self.p].size;
        let len = len.min(size.saturating_sub(off));
        if len == 0 {
            return;
        }
        match self.kind {
            Kind::Dax | Kind::DaxDefault => {
                self.pm(Counts { reads: 1, read_bytes: len, ..Counts::default() }).await
            }
            Kind::PageCache => {
                for pg in Call::pages(off, len) {
                    let cached = !self.files.borrow_mut()[self.p].cached.insert(pg);
                    if !cached {
                        self.read_page_in().await;
                    }
                }
                let dram = self.dev.cfg.host.dram_mbps;
                self.cpu((len * 1000).div_ceil(dram)).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::Pattern;

    fn phase(access: Access, pattern: Pattern, size: usize, ops: u64) -> Phase {
        Phase { access, pattern, size, ops }
    }

    /// The calibration point of `alloc_ns` and `commit_cpu_ns`: a 4 KiB O_DSYNC append on
    /// Ext4-DAX near SplitFS's 9.0 µs.
    #[test]
    fn a_4k_append_on_ext4_dax_costs_about_what_splitfs_measured() {
        let m = KernelMachine::new(&TimedConfig::default(), Kind::Dax, 1, 64 << 20);
        let r = m.run(&phase(Access::Write, Pattern::Seq, 4096, 1000), 1).unwrap();
        let us = r.elapsed.as_micros_f64() / 1000.0;
        println!("{us:.2} µs per 4 KiB O_DSYNC append");
        assert!((7.5..10.5).contains(&us), "{us} µs per append");
    }

    #[test]
    fn overwrites_journal_nothing_and_cost_less_than_appends() {
        let m = KernelMachine::new(&TimedConfig::default(), Kind::Dax, 1, 1 << 20);
        let append = m.run(&phase(Access::Write, Pattern::Seq, 4096, 256), 1).unwrap();
        let over = m.run(&phase(Access::Write, Pattern::Seq, 4096, 256), 1).unwrap();
        assert!(over.elapsed.as_nanos() * 2 < append.elapsed.as_nanos());
        assert_eq!(over.channel_busy_ns[1], 256 * (4096 * 1000u64).div_ceil(2300 * 6));
    }

    #[test]
    fn page_cache_reads_hit_after_the_first_touch_of_a_page() {
        let m = KernelMachine::new(&TimedConfig::default(), Kind::PageCache, 1, 1 << 20);
        m.run(&phase(Access::Write, Pattern::Seq, 4096, 256), 1).unwrap();
        let r = m.run(&phase(Access::Read, Pattern::Seq, 256, 4096), 1).unwrap();
        // 4096 reads of 256 B cover the 256 pages once each: 256 page-ins from PM, the other
        // 15 reads of each page are page-cache hits.
        let read_bw = 6600 * 6u64;
        assert_eq!(r.channel_busy_ns[0], 256 * (4096 * 1000u64).div_ceil(read_bw));
    }
}
