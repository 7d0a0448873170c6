//! Metering PM accesses: the file-system code runs unchanged on a [`MeterPm`], which passes
//! every access through to real memory and counts it for the agent that made it. A step of
//! the model runs some code, takes the counts, and charges their time (see `devices.rs`).
//!
//! The host's last-level cache is modelled for metadata only: a host read of at most
//! [`METADATA_READ`] bytes whose lines are all cached costs an LLC hit and no PM traffic.
//! Host stores keep their lines cached; non-temporal stores, and every write by the NIC or
//! the copy engine (DMA, no DDIO), drop them.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use nicfs_pm::{CACHE_LINE, Pm, PmAddr, SharedPm};

/// Largest read treated as a metadata read (an inode, index lines, log words).
pub const METADATA_READ: usize = 128;

/// Who makes the accesses of a [`MeterPm`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Agent {
    /// A host core (front end, baselines): loads and stores through the CPU caches.
    Host,
    /// The SmartNIC: every access is a DMA transfer over PCIe.
    Nic,
    /// The host copy engine: DMA inside the host.
    Copy,
}

/// Accesses counted since the last [`MeterPm::take`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Reads that reach PM.
    pub reads: u64,
    /// Bytes they read.
    pub read_bytes: u64,
    /// Host reads served by the last-level cache.
    pub llc_hits: u64,
    /// Writes that reach PM (a NIC or copy-engine store, a host flush or non-temporal store).
    pub writes: u64,
    /// Bytes they write.
    pub write_bytes: u64,
    /// Fences.
    pub fences: u64,
}

impl Counts {
    /// Whether nothing was counted.
    pub fn is_empty(&self) -> bool {
        *self == Counts::default()
    }
}

/// The host LLC's metadata lines: a FIFO-evicted set.
#[derive(Default)]
pub struct Llc {
    lines: HashSet<u64>,
    order: VecDeque<u64>,
    capacity: usize,
}

impl Llc {
    /// An empty cache of `capacity` lines.
    pub fn new(capacity: usize) -> Llc {
        Llc { capacity, ..Llc::default() }
    }

    fn lines(addr: PmAddr, len: u64) -> std::ops::RangeInclusive<u64> {
        addr.line()..=(addr.get() + len.max(1) - 1) / CACHE_LINE
    }

    fn hit(&self, addr: PmAddr, len: u64) -> bool {
        Llc::lines(addr, len).all(|l| self.lines.contains(&l))
    }

    fn insert(&mut self, addr: PmAddr, len: u64) {
        if self.capacity == 0 {
            return;
        }
        for l in Llc::lines(addr, len) {
            if self.lines.insert(l) {
                self.order.push_back(l);
            }
        }
        while self.lines.len() > self.capacity {
            match self.order.pop_front() {
                Some(l) => {
                    self.lines.remove(&l);
                }
                None => break,
            }
        }
    }

    fn drop_lines(&mut self, addr: PmAddr, len: u64) {
        for l in Llc::lines(addr, len) {
            self.lines.remove(&l);
        }
    }
}

/// A shared host LLC.
pub type SharedLlc = Arc<Mutex<Llc>>;

/// PM as one agent uses it, counting every access.
pub struct MeterPm {
    inner: SharedPm,
    agent: Agent,
    counts: Mutex<Counts>,
    llc: SharedLlc,
}

impl MeterPm {
    /// A view of `inner` for `agent`, sharing the host LLC model `llc`.
    pub fn new(inner: SharedPm, agent: Agent, llc: SharedLlc) -> MeterPm {
        MeterPm { inner, agent, counts: Mutex::new(Counts::default()), llc }
    }

    /// The counts since the last call, which start again from zero.
    pub fn take(&self) -> Counts {
        std::mem::take(&mut *self.counts())
    }

    fn counts(&self) -> MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn llc(&self) -> MutexGuard<'_, Llc> {
        self.llc.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn count_read(&self, addr: PmAddr, len: u64) {
        if self.agent == Agent::Host && len as usize <= METADATA_READ {
            let mut llc = self.llc();
            if llc.hit(addr, len) {
                self.counts().llc_hits += 1;
                return;
            }
            llc.insert(addr, len);
        }
        let mut c = self.counts();
        c.reads += 1;
        c.read_bytes += len;
    }

    fn count_write(&self, addr: PmAddr, len: u64) {
        if self.agent != Agent::Host {
            self.llc().drop_lines(addr, len);
        }
        let mut c = self.counts();
        c.writes += 1;
        c.write_bytes += len;
    }
}

impl Pm for MeterPm {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read(&self, addr: PmAddr, buf: &mut [u8]) {
        self.inner.read(addr, buf);
        self.count_read(addr, buf.len() as u64);
    }

    fn store(&self, addr: PmAddr, data: &[u8]) {
        self.inner.store(addr, data);
        match self.agent {
            // Cached: reaches PM when flushed (or evicted, which the model ignores).
            Agent::Host => self.llc().insert(addr, data.len() as u64),
            Agent::Nic | Agent::Copy => self.count_write(addr, data.len() as u64),
        }
    }

    fn store_nt(&self, addr: PmAddr, data: &[u8]) {
        self.inner.store_nt(addr, data);
        if self.agent == Agent::Host {
            self.llc().drop_lines(addr, data.len() as u64);
        }
        self.count_write(addr, data.len() as u64);
    }

    fn flush(&self, addr: PmAddr, len: u64) {
        self.inner.flush(addr, len);
        if self.agent == Agent::Host && len > 0 {
            let lines = (addr.get() + len - 1) / CACHE_LINE - addr.line() + 1;
            let mut c = self.counts();
            c.writes += 1;
            c.write_bytes += lines * CACHE_LINE;
        }
    }

    fn fence(&self) {
        self.inner.fence();
        self.counts().fences += 1;
    }

    fn store_u64_atomic(&self, addr: PmAddr, value: u64) {
        self.inner.store_u64_atomic(addr, value);
        match self.agent {
            Agent::Host => self.llc().insert(addr, 8),
            Agent::Nic | Agent::Copy => self.count_write(addr, 8),
        }
    }

    fn load_u64_atomic(&self, addr: PmAddr) -> u64 {
        let v = self.inner.load_u64_atomic(addr);
        self.count_read(addr, 8);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nicfs_pm::{FastPm, MappedFile};

    fn pm() -> SharedPm {
        Arc::new(FastPm::new(MappedFile::anonymous(1 << 20).unwrap()))
    }

    #[test]
    fn host_metadata_reads_hit_the_llc_until_another_agent_writes_the_line() {
        let (inner, llc) = (pm(), Arc::new(Mutex::new(Llc::new(1024))));
        let host = MeterPm::new(inner.clone(), Agent::Host, llc.clone());
        let nic = MeterPm::new(inner, Agent::Nic, llc);
        let mut b = [0u8; 64];
        host.read(PmAddr(4096), &mut b);
        host.read(PmAddr(4096), &mut b);
        assert_eq!(host.take(), Counts { reads: 1, read_bytes: 64, llc_hits: 1, ..Counts::default() });
        nic.store(PmAddr(4100), &[1]);
        assert_eq!(nic.take(), Counts { writes: 1, write_bytes: 1, ..Counts::default() });
        host.read(PmAddr(4096), &mut b);
        assert_eq!(host.take().reads, 1, "the NIC's DMA write dropped the line");
        assert_eq!(b[4], 1, "accesses pass through to memory");
    }

    #[test]
    fn host_writes_reach_pm_when_flushed_or_non_temporal() {
        let host = MeterPm::new(pm(), Agent::Host, Arc::new(Mutex::new(Llc::new(16))));
        host.store(PmAddr(0), &[1u8; 100]);
        assert!(host.take().is_empty(), "a cached store is not PM traffic yet");
        host.flush(PmAddr(0), 100);
        host.store_nt(PmAddr(256), &[2u8; 256]);
        host.fence();
        assert_eq!(host.take(), Counts { writes: 2, write_bytes: 128 + 256, fences: 1, ..Counts::default() });
        let mut big = vec![0u8; 4096];
        host.read(PmAddr(0), &mut big);
        host.read(PmAddr(0), &mut big);
        assert_eq!(host.take().reads, 2, "file data is always read from PM");
    }
}
