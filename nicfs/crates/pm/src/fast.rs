//! The fast back end: real cache-line write-back and store-fence instructions.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::region::check_range;
use crate::{CACHE_LINE, MappedFile, Pm, PmAddr};

/// Which write-back instruction the CPU offers, detected at run time.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FlushKind {
    /// `clwb`: write back, keep the line cached (best).
    Clwb,
    /// `clflushopt`: write back and invalidate, weakly ordered.
    ClflushOpt,
    /// `clflush`: write back and invalidate, strongly ordered (always on x86-64).
    Clflush,
    /// Not x86-64: only a memory fence is issued (the page cache of the backing file is the
    /// persistence domain).
    FenceOnly,
}

impl FlushKind {
    /// Detects the best instruction this CPU supports.
    pub fn detect() -> FlushKind {
        #[cfg(target_arch = "x86_64")]
        {
            // CPUID leaf 7, sub-leaf 0, EBX: bit 24 = CLWB, bit 23 = CLFLUSHOPT.
            #[allow(unused_unsafe)]
            // SAFETY: CPUID is available on every x86-64 CPU.
            let ebx = unsafe { std::arch::x86_64::__cpuid_count(7, 0) }.ebx;
            if ebx & (1 << 24) != 0 {
                return FlushKind::Clwb;
            }
            if ebx & (1 << 23) != 0 {
                return FlushKind::ClflushOpt;
            }
            FlushKind::Clflush
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            FlushKind::FenceOnly
        }
    }
}

/// PM with real write-back instructions over a shared mapping.
pub struct FastPm {
    map: MappedFile,
    kind: FlushKind,
}

impl FastPm {
    /// Wraps a mapping, detecting the flush instruction.
    pub fn new(map: MappedFile) -> FastPm {
        FastPm { map, kind: FlushKind::detect() }
    }

    /// Wraps a mapping with a given flush instruction (must be supported by the CPU, or
    /// `FenceOnly`/`Clflush`, which always are on x86-64).
    pub fn with_kind(map: MappedFile, kind: FlushKind) -> FastPm {
        FastPm { map, kind }
    }

    /// The write-back instruction in use.
    pub fn flush_kind(&self) -> FlushKind {
        self.kind
    }

    fn ptr(&self, addr: PmAddr, n: u64) -> *mut u8 {
        check_range(self.map.len(), addr, n);
        // SAFETY: the range was just checked to lie inside the mapping.
        unsafe { self.map.base().add(addr.get() as usize) }
    }

    fn atomic(&self, addr: PmAddr) -> &AtomicU64 {
        assert!(addr.is_aligned(8), "unaligned atomic PM access at {addr}");
        let p = self.ptr(addr, 8);
        // SAFETY: aligned, in range, and the mapping outlives `self`.
        unsafe { AtomicU64::from_ptr(p.cast()) }
    }
}

#[cfg(target_arch = "x86_64")]
fn write_back(kind: FlushKind, p: *const u8) {
    // SAFETY: `p` points into a live mapping; the instructions only affect caching.
    unsafe {
        match kind {
            FlushKind::Clwb => std::arch::asm!("clwb [{0}]", in(reg) p, options(nostack, preserves_flags)),
            FlushKind::ClflushOpt => {
                std::arch::asm!("clflushopt [{0}]", in(reg) p, options(nostack, preserves_flags))
            }
            FlushKind::Clflush => std::arch::x86_64::_mm_clflush(p),
            FlushKind::FenceOnly => {}
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn write_back(_kind: FlushKind, _p: *const u8) {}

impl Pm for FastPm {
    fn len(&self) -> u64 {
        self.map.len()
    }

    fn read(&self, addr: PmAddr, buf: &mut [u8]) {
        let p = self.ptr(addr, buf.len() as u64);
        // SAFETY: in range; the mapping is plain memory shared with other writers, which the
        // `Pm` contract makes the caller's concern.
        unsafe { std::ptr::copy_nonoverlapping(p, buf.as_mut_ptr(), buf.len()) }
    }

    fn store(&self, addr: PmAddr, data: &[u8]) {
        let p = self.ptr(addr, data.len() as u64);
        // SAFETY: in range, and `data` cannot alias the mapping mutably.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) }
    }

    fn store_nt(&self, addr: PmAddr, data: &[u8]) {
        // Emulated as a store plus write-back: durable at the next fence, like a streaming store.
        self.store(addr, data);
        self.flush(addr, data.len() as u64);
    }

    fn flush(&self, addr: PmAddr, len: u64) {
        if len == 0 {
            return;
        }
        let first = addr.line();
        let last = (addr.get() + len - 1) / CACHE_LINE;
        let base = self.ptr(PmAddr(first * CACHE_LINE), (last - first + 1) * CACHE_LINE);
        for i in 0..=(last - first) {
            // SAFETY: every line lies inside the range checked above.
            write_back(self.kind, unsafe { base.add((i * CACHE_LINE) as usize) });
        }
    }

    fn fence(&self) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: sfence has no memory-safety preconditions.
        unsafe {
            std::arch::x86_64::_mm_sfence()
        };
        std::sync::atomic::fence(Ordering::SeqCst);
    }

    fn store_u64_atomic(&self, addr: PmAddr, value: u64) {
        self.atomic(addr).store(value, Ordering::Release);
    }

    fn load_u64_atomic(&self, addr: PmAddr) -> u64 {
        self.atomic(addr).load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_flush_read_round_trip_with_every_flush_kind() {
        for kind in [FlushKind::detect(), FlushKind::Clflush, FlushKind::FenceOnly] {
            let pm = FastPm::with_kind(MappedFile::anonymous(8192).unwrap(), kind);
            pm.persist(PmAddr(100), b"hello persistent world");
            pm.fence();
            let mut buf = [0u8; 22];
            pm.read(PmAddr(100), &mut buf);
            assert_eq!(&buf, b"hello persistent world");
            pm.store_u64_atomic(PmAddr(4096), 0xdead_beef);
            assert_eq!(pm.load_u64_atomic(PmAddr(4096)), 0xdead_beef);
        }
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn out_of_range_access_panics_loudly() {
        let pm = FastPm::new(MappedFile::anonymous(4096).unwrap());
        pm.store(PmAddr(4090), &[0u8; 16]);
    }

    #[test]
    fn two_mappings_of_one_file_share_bytes() {
        let path = std::env::temp_dir().join(format!("nicfs-pm-share-{}", std::process::id()));
        let a = FastPm::new(MappedFile::create(&path, 4096).unwrap());
        let b = FastPm::new(MappedFile::open(&path).unwrap());
        a.store_u64_atomic(PmAddr(64), 42);
        assert_eq!(b.load_u64_atomic(PmAddr(64)), 42);
        std::fs::remove_file(path).unwrap();
    }
}
