//! The report sections about energy, power over time and the host resources of a host-side
//! FTL (serialised inside [`Report`](crate::Report)).

use serde::{Deserialize, Serialize};

use firmware::power::Energy;

/// Energy over the run (from the first command to the last completion) and what it means per
/// second and per command.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EnergyReport {
    /// Joules per component.
    pub joules: Energy,
    /// Every component, joules.
    pub total_j: f64,
    /// The device's components (NAND, channels, controller, DRAM, link), joules.
    pub device_j: f64,
    /// The host's components (host CPU and DRAM of a host-side FTL), joules.
    pub host_j: f64,
    /// Mean power per component, watts.
    pub mean_w: Energy,
    /// Mean power of the device, watts.
    pub device_w: f64,
    /// Mean power of the host's storage stack, watts.
    pub host_w: f64,
    /// Total energy per command completed, joules.
    pub joules_per_io: f64,
}

/// Power per interval, watts, by component (the same intervals as the other columns).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PowerSeries {
    /// NAND array operations and idle dies.
    pub nand: Vec<f64>,
    /// Flash channel transfers.
    pub channels: Vec<f64>,
    /// Controller cores and static power.
    pub controller: Vec<f64>,
    /// Controller DRAM.
    pub dram: Vec<f64>,
    /// Host link.
    pub link: Vec<f64>,
    /// Host CPU (host-side FTLs).
    pub host_cpu: Vec<f64>,
    /// Host DRAM (host-side FTLs).
    pub host_dram: Vec<f64>,
    /// The device's components together.
    pub device: Vec<f64>,
    /// Every component.
    pub total: Vec<f64>,
}

impl PowerSeries {
    /// Appends one interval's mean power.
    pub fn push(&mut self, w: &Energy) {
        self.nand.push(w.nand);
        self.channels.push(w.channels);
        self.controller.push(w.controller);
        self.dram.push(w.dram);
        self.link.push(w.link);
        self.host_cpu.push(w.host_cpu);
        self.host_dram.push(w.host_dram);
        self.device.push(w.device());
        self.total.push(w.total());
    }

    /// (component, values) for every component, device and host parts first.
    pub fn columns(&self) -> [(&'static str, &[f64]); 7] {
        [
            ("nand", &self.nand),
            ("channels", &self.channels),
            ("controller", &self.controller),
            ("dram", &self.dram),
            ("link", &self.link),
            ("host_cpu", &self.host_cpu),
            ("host_dram", &self.host_dram),
        ]
    }
}

/// What a host-side FTL used on the host.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HostReport {
    /// Host cores the storage stack runs on.
    pub cores: u32,
    /// Their mean busy fraction over the run (from its first command to its last completion).
    pub cpu_busy: f64,
    /// Host memory at the end, bytes.
    pub memory_bytes: u64,
    /// The most host memory held at once, bytes.
    pub peak_memory_bytes: u64,
    /// Host memory at the end by use, bytes.
    pub memory_by_use: std::collections::BTreeMap<String, u64>,
}
