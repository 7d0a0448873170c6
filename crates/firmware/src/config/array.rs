//! The flash array controllers and the on-device data path.

use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};
use sim::{ByteSize, Frequency};

/// Flash array controllers, the SRAM data pool and the DMA engine of a raw array.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrayConfig {
    /// Channels each flash array controller owns. Default: 4 (PRESETS.md, hostftl-array).
    #[serde(default = "four")]
    pub channels_per_controller: u32,
    /// Command slots per controller. Default: 4 (PRESETS.md).
    #[serde(default = "four")]
    pub slots: u32,
    /// Bytes of one command slot: a 32-byte header and 8 bytes per PPA. Default: 192B
    /// (PRESETS.md), so at most 20 PPAs per command.
    #[serde(default = "slot_bytes")]
    pub slot_bytes: ByteSize,
    /// Clock of the controllers' command logic. Default: 250MHz (assumption).
    #[serde(default = "mhz250")]
    pub clock: Frequency,
    /// Cycles to decode and dispatch one command. Default: 250 (1 us; assumption).
    #[serde(default = "c250")]
    pub command_cycles: u64,
    /// Cycles per page a command names. Default: 50 (assumption).
    #[serde(default = "c50")]
    pub page_cycles: u64,
    /// On-device SRAM data pool (page buffers for data in flight). Default: 8MiB (assumption).
    #[serde(default = "sram")]
    pub sram: ByteSize,
    /// DMA engine width, bits. Default: 256 (PRESETS.md).
    #[serde(default = "w256")]
    pub dma_width_bits: u32,
    /// DMA engine clock. Default: 120MHz (PRESETS.md).
    #[serde(default = "mhz120")]
    pub dma_clock: Frequency,
    /// Share of the DMA engine's raw rate it delivers. Default: 0.9 (PRESETS.md).
    #[serde(default = "eff")]
    pub dma_efficiency: f64,
}

fn four() -> u32 {
    4
}
fn slot_bytes() -> ByteSize {
    ByteSize(192)
}
fn mhz250() -> Frequency {
    Frequency::mhz(250)
}
fn c250() -> u64 {
    250
}
fn c50() -> u64 {
    50
}
fn sram() -> ByteSize {
    ByteSize::mib(8)
}
fn w256() -> u32 {
    256
}
fn mhz120() -> Frequency {
    Frequency::mhz(120)
}
fn eff() -> f64 {
    0.9
}

impl Default for ArrayConfig {
    fn default() -> Self {
        ArrayConfig {
            channels_per_controller: four(),
            slots: four(),
            slot_bytes: slot_bytes(),
            clock: mhz250(),
            command_cycles: c250(),
            page_cycles: c50(),
            sram: sram(),
            dma_width_bits: w256(),
            dma_clock: mhz120(),
            dma_efficiency: eff(),
        }
    }
}

/// Bytes of a command's header.
const HEADER: u64 = 32;
/// Bytes per PPA in a command.
const PPA_BYTES: u64 = 8;

impl ArrayConfig {
    /// The most PPAs one command can name.
    pub fn max_ppas(&self) -> usize {
        (self.slot_bytes.bytes().saturating_sub(HEADER) / PPA_BYTES) as usize
    }

    /// The DMA engine's rate, bytes per second.
    pub fn dma_bytes_per_sec(&self) -> f64 {
        self.dma_width_bits as f64 / 8.0 * self.dma_clock.hz() as f64 * self.dma_efficiency
    }

    /// Checks every field against the array (`channels`, `page_bytes`); the error names the
    /// first bad one.
    pub fn validate(&self, channels: u32, page_bytes: u64) -> Result<(), ConfigError> {
        let c = self.channels_per_controller;
        ensure(c >= 1 && channels.is_multiple_of(c), "channels_per_controller", || {
            format!("must divide the {channels} channels (got {c})")
        })?;
        ensure(self.slots >= 1, "slots", || "must be at least 1".into())?;
        ensure(self.max_ppas() >= 1, "slot_bytes", || {
            format!(
                "must hold a {HEADER}-byte header and at least one {PPA_BYTES}-byte PPA (got {})",
                self.slot_bytes
            )
        })?;
        ensure(self.clock.hz() >= 1_000_000, "clock", || {
            format!("must be at least 1MHz (got {})", self.clock)
        })?;
        ensure(self.sram.bytes() >= 2 * page_bytes, "sram", || {
            format!("must hold at least two pages ({}B), got {}", 2 * page_bytes, self.sram)
        })?;
        ensure(self.dma_width_bits >= 8 && self.dma_clock.hz() >= 1_000_000, "dma_width_bits", || {
            "the DMA engine needs at least 8 bits at 1MHz".into()
        })?;
        ensure(self.dma_efficiency > 0.0 && self.dma_efficiency <= 1.0, "dma_efficiency", || {
            format!("must be in (0, 1] (got {})", self.dma_efficiency)
        })
    }
}
