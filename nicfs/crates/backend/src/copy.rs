//! The host-side copy engine: bulk data moves from log data to file blocks, requested by
//! the back end (the NIC never pulls bulk data through its own DMA channel). The request is
//! executed by host code with host PM access, standing for a host kernel thread or an I/OAT
//! style engine that the NIC triggers.

use nicfs_pm::{PmAddr, SharedPm};

/// One copy request.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CopyReq {
    /// Source (log data).
    pub src: PmAddr,
    /// Destination (file block).
    pub dst: PmAddr,
    /// Bytes.
    pub len: u64,
}

/// Copies with the host CPU and PM: store + write-back, then one fence per request list.
pub struct CopyEngine {
    pm: SharedPm,
}

impl CopyEngine {
    /// An engine over host PM.
    pub fn new(pm: SharedPm) -> CopyEngine {
        CopyEngine { pm }
    }

    /// Executes `reqs`; they are durable on return. Returns the bytes copied.
    pub fn run(&self, reqs: &[CopyReq]) -> u64 {
        let mut buf = Vec::new();
        let mut total = 0;
        for r in reqs {
            buf.resize(r.len as usize, 0);
            self.pm.read(r.src, &mut buf);
            self.pm.store(r.dst, &buf);
            self.pm.flush(r.dst, r.len);
            total += r.len;
        }
        if !reqs.is_empty() {
            self.pm.fence();
        }
        total
    }
}

impl std::fmt::Debug for CopyEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CopyEngine")
    }
}
