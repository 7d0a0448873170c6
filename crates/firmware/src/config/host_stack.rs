//! The host's storage stack as configured (`host` of `[system]` for a bridge or a host-side
//! FTL): the host cores its threads run on, the CPU each command costs there, and the host
//! memory it holds.

use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};
use sim::{ByteSize, Frequency};

/// The host's storage stack: threads, CPU cost per command, fixed memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostStackConfig {
    /// Host cores the stack's threads run on (workers are spread over them). Default: 4.
    #[serde(default = "four")]
    pub cores: u32,
    /// Their clock. Default: 3GHz.
    #[serde(default = "ghz3")]
    pub clock: Frequency,
    /// CPU cycles to submit one command (system call, block layer, driver). Default: 6000
    /// (2 us at 3 GHz: the Linux block I/O submission path, assumption).
    #[serde(default = "c6000")]
    pub submit_cycles: u64,
    /// CPU cycles to complete one command (interrupt, completion, waking the thread). Default:
    /// 6000 (2 us at 3 GHz, assumption).
    #[serde(default = "c6000")]
    pub complete_cycles: u64,
    /// Host memory the stack holds regardless of load (driver, queues, tables). Default: 64MiB.
    #[serde(default = "mib64")]
    pub memory: ByteSize,
    /// Host memory per command in flight (request, descriptors, DMA mapping). Default: 4KiB.
    #[serde(default = "kib4")]
    pub memory_per_command: ByteSize,
}

fn four() -> u32 {
    4
}
fn ghz3() -> Frequency {
    Frequency(3_000_000_000)
}
fn c6000() -> u64 {
    6000
}
fn mib64() -> ByteSize {
    ByteSize::mib(64)
}
fn kib4() -> ByteSize {
    ByteSize::kib(4)
}

impl Default for HostStackConfig {
    fn default() -> Self {
        HostStackConfig {
            cores: four(),
            clock: ghz3(),
            submit_cycles: c6000(),
            complete_cycles: c6000(),
            memory: mib64(),
            memory_per_command: kib4(),
        }
    }
}

impl HostStackConfig {
    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        ensure((1..=256).contains(&self.cores), "cores", || {
            format!("must be 1 to 256 (got {})", self.cores)
        })?;
        ensure(self.clock.hz() >= 1_000_000, "clock", || {
            format!("must be at least 1MHz (got {})", self.clock)
        })
    }
}
