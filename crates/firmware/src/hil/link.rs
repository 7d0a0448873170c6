//! The PCIe link: two directions, each a pipe that carries one DMA at a time at the lane rate,
//! with per-TLP overhead and a fixed DMA start-up cost.

use std::cell::Cell;

use sim::{Cx, SimDuration, SimTime};

use crate::hil::config::LinkConfig;

/// Direction of a transfer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Host memory to device (write data, fetched commands).
    ToDevice,
    /// Device to host memory (read data, completions).
    ToHost,
}

/// The link model.
pub struct Link {
    cfg: LinkConfig,
    /// Femtoseconds per byte on the wire.
    fs_per_byte: u64,
    busy: [Cell<SimTime>; 2],
    bytes: [Cell<u64>; 2],
}

impl Link {
    /// A link as configured (validated).
    pub fn new(cfg: &LinkConfig) -> Self {
        // Per-lane payload rate after line encoding, in MB/s.
        let lane_mbps: f64 = match (cfg.is_sata(), cfg.generation) {
            (true, g) => 150.0 * (1u32 << (g.clamp(1, 3) - 1)) as f64, // 1.5/3/6 Gb/s, 8b/10b
            (false, 1) => 250.0,
            (false, 2) => 500.0,
            (false, 3) => 8000.0 * 128.0 / 130.0 / 8.0,
            (false, 4) => 16000.0 * 128.0 / 130.0 / 8.0,
            _ => 32000.0 * 128.0 / 130.0 / 8.0,
        };
        let bytes_per_sec = lane_mbps * 1e6 * cfg.lanes as f64;
        Link {
            cfg: cfg.clone(),
            fs_per_byte: (1e15 / bytes_per_sec).round() as u64,
            busy: [Cell::new(SimTime::ZERO), Cell::new(SimTime::ZERO)],
            bytes: [Cell::new(0), Cell::new(0)],
        }
    }

    /// Wire time of a `bytes` transfer, TLP overhead included.
    pub fn wire_time(&self, bytes: u64) -> SimDuration {
        let tlps = bytes.div_ceil(self.cfg.max_payload.bytes()).max(1);
        let on_wire = bytes + tlps * self.cfg.tlp_overhead.bytes();
        SimDuration::from_nanos((on_wire * self.fs_per_byte).div_ceil(1_000_000))
    }

    /// Moves `bytes` in `dir`: DMA set-up, then the wire time once the direction is free.
    /// Returns when the data has arrived.
    pub async fn transfer(&self, cx: &Cx, dir: Dir, bytes: u64) {
        let end = self.reserve(cx.now(), dir, bytes);
        cx.sleep_until(end).await;
    }

    /// Reserves the transfer [`transfer`](Self::transfer) makes, starting no earlier than
    /// `at`, without waiting for it; returns when the data will have arrived. Reservations
    /// are served in the order they are made.
    pub fn reserve(&self, at: SimTime, dir: Dir, bytes: u64) -> SimTime {
        let d = dir as usize;
        let start = (at + self.cfg.dma_setup).max(self.busy[d].get());
        let end = start + self.wire_time(bytes);
        self.busy[d].set(end);
        self.bytes[d].set(self.bytes[d].get() + bytes);
        end
    }

    /// Latency of a doorbell write or interrupt message.
    pub fn mmio_latency(&self) -> SimDuration {
        self.cfg.mmio_latency
    }

    /// Lanes of the link.
    pub fn lanes(&self) -> u32 {
        self.cfg.lanes
    }

    /// Payload bytes moved so far: (to device, to host).
    pub fn bytes(&self) -> (u64, u64) {
        (self.bytes[0].get(), self.bytes[1].get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gen3_x8_moves_4kib_in_about_half_a_microsecond() {
        let l = Link::new(&LinkConfig { lanes: 8, ..LinkConfig::default() });
        // 4096 B + 16 TLPs x 24 B = 4480 B at 7.877 GB/s.
        let t = l.wire_time(4096).as_nanos();
        assert!((568..=570).contains(&t), "{t}");
    }
}
