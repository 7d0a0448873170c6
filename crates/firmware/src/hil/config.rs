//! Host-interface configuration: queues, LBA format, arbitration, the PCIe link, interrupts and
//! the firmware costs of software NVMe.

use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};
use sim::{ByteSize, SimDuration};

/// How the controller picks the next submission queue to fetch from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Arbitration {
    /// Every non-empty queue in turn.
    #[default]
    RoundRobin,
    /// NVMe weighted round robin: urgent queues first (strict priority), then high, medium and
    /// low queues by weight.
    Weighted {
        /// Commands per round from high-priority queues. Default: 4.
        #[serde(default = "w4")]
        high: u32,
        /// Commands per round from medium-priority queues. Default: 2.
        #[serde(default = "w2")]
        medium: u32,
        /// Commands per round from low-priority queues. Default: 1.
        #[serde(default = "w1")]
        low: u32,
    },
}

fn w4() -> u32 {
    4
}
fn w2() -> u32 {
    2
}
fn w1() -> u32 {
    1
}

/// The physical protocol of the host link.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkProtocol {
    /// PCI Express: 128b/130b encoding from Gen3 on, TLPs.
    #[default]
    Pcie,
    /// Serial ATA (or SAS at the same rate): one lane, 8b/10b encoding, frames (FISes).
    Sata,
}

/// The link between host and device: PCIe (the default) or SATA.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    /// Physical protocol. Default: pcie.
    #[serde(default, skip_serializing_if = "is_pcie")]
    pub protocol: LinkProtocol,
    /// PCIe generation, 1 to 5; for SATA, 1 to 3 (1.5, 3 or 6 Gb/s). Default: 3.
    #[serde(default = "gen3")]
    pub generation: u32,
    /// Lanes: 1, 2, 4, 8 or 16. Default: 4.
    #[serde(default = "x4")]
    pub lanes: u32,
    /// Largest TLP payload. Default: 256B.
    #[serde(default = "mps")]
    pub max_payload: ByteSize,
    /// Header, sequence and CRC bytes per TLP. Default: 24B.
    #[serde(default = "tlp")]
    pub tlp_overhead: ByteSize,
    /// Fixed cost of starting a DMA. Default: 500ns.
    #[serde(default = "dma_setup")]
    pub dma_setup: SimDuration,
    /// Latency of a posted MMIO write (a doorbell) or an interrupt message. Default: 400ns.
    #[serde(default = "mmio")]
    pub mmio_latency: SimDuration,
}

fn is_pcie(p: &LinkProtocol) -> bool {
    *p == LinkProtocol::Pcie
}

fn gen3() -> u32 {
    3
}
fn x4() -> u32 {
    4
}
fn mps() -> ByteSize {
    ByteSize(256)
}
fn tlp() -> ByteSize {
    ByteSize(24)
}
fn dma_setup() -> SimDuration {
    SimDuration::from_nanos(500)
}
fn mmio() -> SimDuration {
    SimDuration::from_nanos(400)
}

impl LinkConfig {
    /// Whether the link is SATA.
    pub fn is_sata(&self) -> bool {
        self.protocol == LinkProtocol::Sata
    }
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            protocol: LinkProtocol::Pcie,
            generation: 3,
            lanes: 4,
            max_payload: mps(),
            tlp_overhead: tlp(),
            dma_setup: dma_setup(),
            mmio_latency: mmio(),
        }
    }
}

/// Software-NVMe costs on the core that runs the host interface, in cycles.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HilCosts {
    /// Per command fetched (doorbell scan, SQE copy). Default: 2000.
    #[serde(default = "c2000")]
    pub fetch: u64,
    /// Per command decoded and split into sub-requests. Default: 1500.
    #[serde(default = "c1500")]
    pub parse: u64,
    /// Per data transfer set up (PRP walk, DMA programming). Default: 1500.
    #[serde(default = "c1500")]
    pub dma: u64,
    /// Per completion posted (CQE write, interrupt). Default: 2000.
    #[serde(default = "c2000")]
    pub completion: u64,
}

fn c1500() -> u64 {
    1500
}
fn c2000() -> u64 {
    2000
}

impl Default for HilCosts {
    fn default() -> Self {
        HilCosts { fetch: 2000, parse: 1500, dma: 1500, completion: 2000 }
    }
}

/// The NVMe host interface.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostInterfaceConfig {
    /// I/O queue pairs the controller supports. Default: 16.
    #[serde(default = "q16")]
    pub queues: u32,
    /// Entries per queue. Default: 1024.
    #[serde(default = "d1024")]
    pub queue_depth: u32,
    /// Logical block size of the namespace: 512B or 4KiB. Default: 512B.
    #[serde(default = "lba512")]
    pub lba_size: ByteSize,
    /// Largest data transfer of one command (MDTS). Default: 1MiB.
    #[serde(default = "mdts")]
    pub max_transfer: ByteSize,
    /// Commands fetched from a queue per arbitration turn. Default: 4.
    #[serde(default = "w4")]
    pub fetch_burst: u32,
    /// Commands of one submission queue inside the device at once (fetched, not yet
    /// completed): the fetcher leaves a queue at this many alone until one completes (MQSim's
    /// `Queue_Fetch_Size`). Default: unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_fetch_size: Option<u32>,
    /// Commands of all submission queues inside the device at once (the controller's command
    /// slots): when they are taken, the fetcher waits for a completion, and the next slot goes
    /// to the queue arbitration picks (so under weighted round robin an urgent queue's command
    /// is fetched before the others' waiting ones). Default: unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_commands: Option<u32>,
    /// Coroutine workers per submission queue. Default: 8.
    #[serde(default = "d8")]
    pub workers_per_queue: u32,
    /// Queue arbitration. Default: round robin.
    #[serde(default)]
    pub arbitration: Arbitration,
    /// The PCIe link. Default: Gen3 x4.
    #[serde(default)]
    pub link: LinkConfig,
    /// Interrupt coalescing: raise an interrupt once this many completions are pending.
    /// Default: 1 (no coalescing).
    #[serde(default = "w1")]
    pub coalesce_count: u32,
    /// Interrupt coalescing: or once the oldest pending completion is this old. Default: 0.
    #[serde(default)]
    pub coalesce_time: SimDuration,
    /// Host time from interrupt to the completion reaching the application. Default: 2us.
    #[serde(default = "irq")]
    pub host_irq_latency: SimDuration,
    /// Firmware costs.
    #[serde(default)]
    pub costs: HilCosts,
}

fn q16() -> u32 {
    16
}
fn d1024() -> u32 {
    1024
}
fn d8() -> u32 {
    8
}
fn lba512() -> ByteSize {
    ByteSize(512)
}
fn mdts() -> ByteSize {
    ByteSize::mib(1)
}
fn irq() -> SimDuration {
    SimDuration::from_micros(2)
}

impl Default for HostInterfaceConfig {
    fn default() -> Self {
        HostInterfaceConfig {
            queues: q16(),
            queue_depth: d1024(),
            lba_size: lba512(),
            max_transfer: mdts(),
            fetch_burst: 4,
            queue_fetch_size: None,
            device_commands: None,
            workers_per_queue: d8(),
            arbitration: Arbitration::default(),
            link: LinkConfig::default(),
            coalesce_count: 1,
            coalesce_time: SimDuration::ZERO,
            host_irq_latency: irq(),
            costs: HilCosts::default(),
        }
    }
}

impl HostInterfaceConfig {
    /// Checks every field against the mapping unit size.
    pub fn validate(&self, unit_bytes: u64) -> Result<(), ConfigError> {
        ensure((1..=1024).contains(&self.queues), "queues", || {
            format!("must be 1 to 1024 (got {})", self.queues)
        })?;
        ensure((2..=65536).contains(&self.queue_depth), "queue_depth", || {
            format!("must be 2 to 65536 (got {})", self.queue_depth)
        })?;
        let lba = self.lba_size.bytes();
        ensure(lba == 512 || lba == 4096, "lba_size", || {
            format!("must be 512B or 4KiB (got {})", self.lba_size)
        })?;
        ensure(lba <= unit_bytes, "lba_size", || {
            format!("must not exceed the mapping unit ({unit_bytes}B)")
        })?;
        let mt = self.max_transfer.bytes();
        ensure(mt >= 4096 && mt.is_multiple_of(lba) && mt <= 64 << 20, "max_transfer", || {
            format!("must be a multiple of the LBA size between 4KiB and 64MiB (got {})", self.max_transfer)
        })?;
        ensure(self.fetch_burst >= 1, "fetch_burst", || "must be at least 1".into())?;
        ensure(self.queue_fetch_size != Some(0), "queue_fetch_size", || {
            "must be at least 1 (leave it out for no limit)".into()
        })?;
        ensure(self.device_commands != Some(0), "device_commands", || {
            "must be at least 1 (leave it out for no limit)".into()
        })?;
        ensure((1..=256).contains(&self.workers_per_queue), "workers_per_queue", || {
            format!("must be 1 to 256 (got {})", self.workers_per_queue)
        })?;
        ensure(self.coalesce_count >= 1, "coalesce_count", || "must be at least 1".into())?;
        let l = &self.link;
        if l.is_sata() {
            ensure((1..=3).contains(&l.generation), "link.generation", || {
                format!("SATA generations are 1 to 3 (got {})", l.generation)
            })?;
            ensure(l.lanes == 1, "link.lanes", || format!("a SATA link has one lane (got {})", l.lanes))?;
        }
        ensure((1..=5).contains(&l.generation), "link.generation", || {
            format!("must be 1 to 5 (got {})", l.generation)
        })?;
        ensure([1, 2, 4, 8, 16].contains(&l.lanes), "link.lanes", || {
            format!("must be 1, 2, 4, 8 or 16 (got {})", l.lanes)
        })?;
        ensure(
            l.max_payload.bytes().is_power_of_two() && (128..=4096).contains(&l.max_payload.bytes()),
            "link.max_payload",
            || format!("must be a power of two from 128B to 4KiB (got {})", l.max_payload),
        )?;
        if let Arbitration::Weighted { high, medium, low } = self.arbitration {
            ensure(high >= 1 && medium >= 1 && low >= 1, "arbitration", || {
                "weights must be at least 1".into()
            })?;
        }
        Ok(())
    }
}
