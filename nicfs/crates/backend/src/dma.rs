//! The DMA channel: the only way the back end reaches PM.

use nicfs_pm::{CostModel, Pm, PmAddr, SharedPm, spin_for_ns};

use crate::DmaModel;

/// PM as seen from the NIC: every read and write is a DMA transfer that costs the modelled
/// latency plus size over bandwidth; flushes and fences are forwarded (the NIC's writes land
/// in the host's persistence domain).
pub struct DmaPm {
    host: SharedPm,
    model: DmaModel,
}

impl DmaPm {
    /// A DMA view of `host`.
    pub fn new(host: SharedPm, model: DmaModel) -> DmaPm {
        DmaPm { host, model }
    }

    fn charge(&self, bytes: u64) {
        spin_for_ns(self.model.latency_ns + CostModel::transfer_ns(bytes, self.model.bandwidth_mbps));
    }
}

impl Pm for DmaPm {
    fn len(&self) -> u64 {
        self.host.len()
    }

    fn read(&self, addr: PmAddr, buf: &mut [u8]) {
        self.host.read(addr, buf);
        self.charge(buf.len() as u64);
    }

    fn store(&self, addr: PmAddr, data: &[u8]) {
        self.host.store(addr, data);
        self.charge(data.len() as u64);
    }

    fn store_nt(&self, addr: PmAddr, data: &[u8]) {
        self.host.store_nt(addr, data);
        self.charge(data.len() as u64);
    }

    fn flush(&self, addr: PmAddr, len: u64) {
        self.host.flush(addr, len);
    }

    fn fence(&self) {
        self.host.fence();
    }

    fn store_u64_atomic(&self, addr: PmAddr, value: u64) {
        self.host.store_u64_atomic(addr, value);
        // Posted 8-byte writes: eight of them cost about one 64-byte transfer.
        spin_for_ns(self.model.latency_ns / 8 + CostModel::transfer_ns(8, self.model.bandwidth_mbps));
    }

    fn load_u64_atomic(&self, addr: PmAddr) -> u64 {
        let v = self.host.load_u64_atomic(addr);
        self.charge(8);
        v
    }
}
