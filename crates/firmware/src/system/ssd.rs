//! A single SSD as a [`System`].

use std::rc::Rc;

use crate::device::Device;
use crate::ftl::Ftl;
use crate::hil::{Controller, Placement};
use crate::power::{Activity, Energy};
use crate::system::{DeviceMeter, Front, Handles, Sample, Sampler, System, SystemError, Totals};

/// Handles on one SSD's counters, kept by a time-series sampler (cheap to clone).
#[derive(Clone)]
pub struct DeviceProbe {
    ftl: Ftl,
    controller: Rc<Controller>,
    meter: DeviceMeter,
    architecture: String,
}

impl DeviceProbe {
    /// Handles on `dev`'s counters.
    pub fn of(dev: &Device) -> DeviceProbe {
        DeviceProbe {
            ftl: dev.ftl.clone(),
            controller: dev.controller.clone(),
            meter: DeviceMeter::of(&dev.platform),
            architecture: dev.architecture().to_string(),
        }
    }

    /// What the device has done so far, for the power model.
    pub fn activity(&self) -> Activity {
        self.meter.activity(self.ftl.fil(), self.controller.link())
    }

    /// Energy used so far, by component.
    pub fn energy(&self) -> Energy {
        self.meter.energy(self.ftl.fil(), self.controller.link())
    }

    /// The counters now.
    pub fn sample(&self) -> Sample {
        let wear = self.ftl.fil().array().borrow().wear();
        Sample::of_ftl(&self.ftl.stats(), self.ftl.free_blocks(), self.energy()).with_wear(wear)
    }

    /// Everything the report needs.
    pub fn totals(&self) -> Totals {
        let fil = self.ftl.fil();
        Totals {
            ftl: self.ftl.stats(),
            fil: fil.stats().clone(),
            erase_counts: fil.erase_counts(),
            cache: self.ftl.cache_hits(),
            cmt: self.ftl.cmt_hits(),
            dirty_units: self.ftl.dirty_lines(),
            free_blocks: self.ftl.free_blocks(),
            link: self.controller.link().bytes(),
            smart: self.controller.smart_log(),
            energy: self.energy(),
            host: None,
            architecture: self.architecture.clone(),
            flow: self.ftl.flow_stats(),
            zones: self.controller.zone_report(),
        }
    }
}

impl Device {
    /// Energy used so far, by component.
    pub fn energy(&self) -> Energy {
        DeviceProbe::of(self).energy()
    }
}

impl System for Device {
    fn handles(&self) -> Handles<'_> {
        Handles::on(&self.platform, Front::Nvme(self.controller.clone()))
    }

    fn sampler(&self) -> Sampler {
        let probe = DeviceProbe::of(self);
        Rc::new(move || probe.sample())
    }

    fn totals(&self) -> Totals {
        DeviceProbe::of(self).totals()
    }

    fn checkpoint(&self) -> Result<(), SystemError> {
        Ok(Device::checkpoint(self)?)
    }

    fn check_invariants(&self) -> Result<(), SystemError> {
        Ok(self.ftl.check_invariants()?)
    }

    /// An SSD with FDP (`[ftl.fdp]`) takes placement identifiers it has; it places every other
    /// write itself.
    fn check_placement(&self, placement: Placement) -> Result<(), SystemError> {
        match (placement, self.ftl.fdp()) {
            (Placement::Pid(p), Some(f)) if f.decode(p).is_none() => {
                let encoding = match f.rgif() {
                    0 => format!("placement identifiers 0 to {}", f.handles - 1),
                    r => format!("placement identifier = group << {} | handle", 16 - r),
                };
                Err(SystemError::InvalidPid(
                    placement,
                    format!(
                        "the device has {} reclaim unit handles in {} reclaim groups ({encoding})",
                        f.handles, f.reclaim_groups
                    ),
                ))
            }
            (Placement::Pid(_), Some(_)) => Ok(()),
            (Placement::Pid(_), None) => Err(SystemError::InvalidPid(
                placement,
                "this device has no Flexible Data Placement (set [ftl.fdp])".into(),
            )),
            _ => Err(SystemError::PlacesItself(placement)),
        }
    }
}
