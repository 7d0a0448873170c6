//! Energy by component.

use std::ops::{Add, AddAssign, Sub};

use serde::{Deserialize, Serialize};

/// Energy used so far, joules, by component. Host components are zero for devices whose FTL
/// runs on the device.
#[derive(Copy, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Energy {
    /// NAND array operations and idle dies.
    pub nand: f64,
    /// Flash channel transfers.
    pub channels: f64,
    /// Controller cores and static board power.
    pub controller: f64,
    /// Controller DRAM.
    pub dram: f64,
    /// Host link PHY.
    pub link: f64,
    /// Host CPU running the storage stack (host-side FTLs).
    pub host_cpu: f64,
    /// Host DRAM the storage stack occupies (host-side FTLs).
    pub host_dram: f64,
}

impl Energy {
    /// Component names, in [`entries`](Self::entries) order.
    pub const NAMES: [&'static str; 7] =
        ["nand", "channels", "controller", "dram", "link", "host_cpu", "host_dram"];

    /// (name, joules) per component.
    pub fn entries(&self) -> [(&'static str, f64); 7] {
        let v =
            [self.nand, self.channels, self.controller, self.dram, self.link, self.host_cpu, self.host_dram];
        std::array::from_fn(|i| (Self::NAMES[i], v[i]))
    }

    /// The device's components (everything but the host's).
    pub fn device(&self) -> f64 {
        self.nand + self.channels + self.controller + self.dram + self.link
    }

    /// The host's components.
    pub fn host(&self) -> f64 {
        self.host_cpu + self.host_dram
    }

    /// Every component.
    pub fn total(&self) -> f64 {
        self.device() + self.host()
    }

    fn zip(self, o: Energy, f: impl Fn(f64, f64) -> f64) -> Energy {
        Energy {
            nand: f(self.nand, o.nand),
            channels: f(self.channels, o.channels),
            controller: f(self.controller, o.controller),
            dram: f(self.dram, o.dram),
            link: f(self.link, o.link),
            host_cpu: f(self.host_cpu, o.host_cpu),
            host_dram: f(self.host_dram, o.host_dram),
        }
    }

    /// Every component divided by `secs` (the mean power over an interval of that length).
    pub fn per_second(&self, secs: f64) -> Energy {
        let s = secs.max(1e-12);
        self.zip(Energy::default(), |a, _| a / s)
    }
}

impl Add for Energy {
    type Output = Energy;
    fn add(self, o: Energy) -> Energy {
        self.zip(o, |a, b| a + b)
    }
}

impl AddAssign for Energy {
    fn add_assign(&mut self, o: Energy) {
        *self = *self + o;
    }
}

impl Sub for Energy {
    type Output = Energy;
    fn sub(self, o: Energy) -> Energy {
        self.zip(o, |a, b| a - b)
    }
}
