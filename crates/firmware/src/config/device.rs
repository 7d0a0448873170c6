//! [`DeviceConfig`]: the whole TOML document, its loading and its validation.

use std::path::Path;

use nand::{Geometry, Timing, TimingModel};
use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};
use sim::{ByteSize, CoreSpec, Frequency};

use crate::arch::ArchitectureConfig;
use crate::config::SystemConfig;
use crate::config::set::{SetError, Setting, apply_settings, parse_value};
use crate::ecc::EccConfig;
use crate::fil::FilConfig;
use crate::ftl::FtlConfig;
use crate::hil::HostInterfaceConfig;
use crate::power::PowerConfig;

/// A whole simulated device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// Short name, shown in reports. Required.
    pub name: String,
    /// One-line description. Default: empty.
    #[serde(default)]
    pub description: String,
    /// Flash array shape. Required.
    pub geometry: Geometry,
    /// Flash timing. Default: MLC datasheet values (see `nand::Timing`).
    #[serde(default)]
    pub timing: Timing,
    /// Controller cores and DRAM. Default: a 1.2 GHz HIL/FTL core and two 500 MHz cores (FIL,
    /// ECC), 1 GiB of DRAM.
    #[serde(default)]
    pub controller: ControllerConfig,
    /// Which firmware architecture runs, on which cores. Default: softssd on cores 0, 1, 2.
    #[serde(default)]
    pub architecture: ArchitectureConfig,
    /// NVMe host interface. Default: see `HostInterfaceConfig`.
    #[serde(default)]
    pub host: HostInterfaceConfig,
    /// Flash translation layer. Default: see `FtlConfig`.
    #[serde(default)]
    pub ftl: FtlConfig,
    /// Flash interface layer. Default: see `FilConfig`.
    #[serde(default)]
    pub fil: FilConfig,
    /// ECC engine. Default: no bit errors.
    #[serde(default)]
    pub ecc: EccConfig,
    /// Power and energy parameters. Default: per cell type and part class (see `power`).
    #[serde(default)]
    pub power: PowerConfig,
    /// What kind of system this is. Default: one SSD.
    #[serde(default, skip_serializing_if = "SystemConfig::is_ssd")]
    pub system: SystemConfig,
}

/// The controller hardware: cores and DRAM.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerConfig {
    /// The cores, in order (core 0 first). Default: a 1.2 GHz core and two 500 MHz cores.
    #[serde(default = "default_cores")]
    pub cores: Vec<CoreSpec>,
    /// DRAM for the data cache and mapping table. Default: 1GiB.
    #[serde(default = "default_dram")]
    pub dram: ByteSize,
}

fn default_cores() -> Vec<CoreSpec> {
    vec![
        CoreSpec::new("hil+ftl", Frequency(1_200_000_000)),
        CoreSpec::new("fil", Frequency::mhz(500)),
        CoreSpec::new("ecc", Frequency::mhz(500)),
    ]
}

fn default_dram() -> ByteSize {
    ByteSize::gib(1)
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig { cores: default_cores(), dram: default_dram() }
    }
}

/// A configuration file that could not be read or parsed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The TOML is malformed or has an unknown or mistyped key.
    #[error("{origin}:{line}:{column}: {message}")]
    Parse {
        /// The file name or preset name.
        origin: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The values do not make a device.
    #[error("{origin}: {error}")]
    Invalid {
        /// The file name or preset name.
        origin: String,
        /// The first bad field.
        error: ConfigError,
    },
}

impl DeviceConfig {
    /// Parses and validates a configuration; `origin` names it in errors (a path or preset).
    pub fn from_toml(text: &str, origin: &str) -> Result<DeviceConfig, LoadError> {
        let cfg: DeviceConfig = toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map_or((1, 1), |s| line_col(text, s.start));
            LoadError::Parse { origin: origin.to_string(), line, column, message: e.message().to_string() }
        })?;
        cfg.validate().map_err(|error| LoadError::Invalid { origin: origin.to_string(), error })?;
        Ok(cfg)
    }

    /// Reads, parses and validates a configuration file.
    pub fn load(path: &Path) -> Result<DeviceConfig, LoadError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| LoadError::Io { path: path.display().to_string(), source })?;
        DeviceConfig::from_toml(&text, &path.display().to_string())
    }

    /// Checks every section; the error names the first bad field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        ensure(!self.name.trim().is_empty(), "name", || "must not be empty".into())?;
        self.geometry.validate().map_err(|e| e.within("geometry"))?;
        self.timing.validate().map_err(|e| e.within("timing"))?;
        let c = &self.controller;
        ensure(!c.cores.is_empty(), "controller.cores", || "at least one core is needed".into())?;
        for (i, core) in c.cores.iter().enumerate() {
            ensure(core.clock.hz() >= 1_000, &format!("controller.cores[{i}].clock"), || {
                format!("must be at least 1kHz (got {})", core.clock)
            })?;
        }
        self.architecture.validate(c.cores.len()).map_err(|e| e.within("architecture"))?;
        self.host.validate(self.geometry.mapping_unit.bytes()).map_err(|e| e.within("host"))?;
        // A host-side FTL keeps its tables in host memory, not in the device's DRAM.
        let dram = if self.system.kind() == "host-ftl" { ByteSize(u64::MAX) } else { c.dram };
        self.ftl.validate(&self.geometry, dram).map_err(|e| e.within("ftl"))?;
        if let Some(z) = self.ftl.zoned_ns() {
            let (lba, unit) = (self.host.lba_size, self.geometry.mapping_unit);
            ensure(lba == unit, "host.lba_size", || {
                format!(
                    "a zoned namespace needs logical blocks of one mapping unit ({unit}; got {lba}): set host.lba_size"
                )
            })?;
            z.validate(&self.geometry, self.ftl.op, Some(self.host.max_transfer))
                .map_err(|e| e.within("ftl"))?;
            ensure(self.system.kind() == "ssd", "ftl.zoned", || {
                format!("a zoned namespace is an SSD's; the {} system has none", self.system.kind())
            })?;
        }
        self.fil.validate().map_err(|e| e.within("fil"))?;
        self.ecc.validate(&self.geometry, self.timing.cell).map_err(|e| e.within("ecc"))?;
        self.power.validate().map_err(|e| e.within("power"))?;
        self.system.validate(&self.geometry).map_err(|e| e.within("system"))?;
        let f = &self.fil;
        if self.architecture.fil_core().is_none()
            && f.intake_cycles + f.dispatch_cycles + f.complete_cycles > 0
        {
            return Err(ConfigError::new(
                "architecture.fil_core",
                "the FIL has firmware costs (fil.intake_cycles, dispatch_cycles, complete_cycles) but no core to \
                 charge them on: set fil_core or zero the costs",
            ));
        }
        let ecc = self.architecture.ecc_core();
        if self.ecc.enabled() && self.architecture.spinning_cores(c.cores.len()).contains(&ecc) {
            return Err(ConfigError::new(
                "architecture.ecc_core",
                format!(
                    "core {ecc} runs requests that spin for cache lines, so it cannot also correct bit errors: place the ECC on another core"
                ),
            ));
        }
        Ok(())
    }

    /// The configuration with every derived default written out (what `ssdlab config` prints).
    pub fn resolved(&self) -> DeviceConfig {
        DeviceConfig {
            timing: self.timing.resolved(),
            ftl: self.ftl.resolved(&self.geometry, self.controller.dram),
            power: self.power.resolved(self.timing.cell, self.host.link.is_sata()),
            ..self.clone()
        }
    }

    /// The power parameters with their defaults.
    pub fn power(&self) -> crate::power::ResolvedPower {
        self.power.resolve(self.timing.cell, self.host.link.is_sata())
    }

    /// The timing model for this geometry.
    pub fn timing_model(&self) -> TimingModel {
        self.timing.model(self.geometry.page_bytes(), self.geometry.oob_size.bytes() as u32)
    }

    /// The configuration as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("a device configuration serialises")
    }

    /// The configuration with the field at `path` (`ftl.cache.capacity`,
    /// `controller.cores[0].clock`) set to `value`, written as on the command line (TOML, or a
    /// bare string), and validated: one [`Setting`].
    pub fn set(&self, path: &str, value: &str) -> Result<DeviceConfig, SetError> {
        apply_settings(self, &[Setting::new(path, parse_value(value))])
    }
}

/// 1-based line and column of byte offset `at` in `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str =
        "name = 'x'\n[geometry]\nchannels = 2\nways = 1\nblocks = 128\npages = 8\npage_size = '16KiB'\n";

    #[test]
    fn minimal_config_gets_defaults() {
        let c = DeviceConfig::from_toml(MINIMAL, "t").unwrap();
        assert_eq!(c.controller.cores.len(), 3);
        let back = DeviceConfig::from_toml(&c.resolved().to_toml(), "round trip").unwrap();
        assert_eq!(back.resolved(), c.resolved());
    }

    #[test]
    fn errors_name_the_line_or_field() {
        let e =
            DeviceConfig::from_toml(&format!("{MINIMAL}bogus = 1\n"), "dev.toml").unwrap_err().to_string();
        assert!(e.starts_with("dev.toml:8:1: unknown field `bogus`"), "{e}");
        let e = DeviceConfig::from_toml(&MINIMAL.replace("channels = 2", "channels = 0"), "dev.toml")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "dev.toml: geometry.channels: must be at least 1 (got 0)");
        let e = DeviceConfig::from_toml(
            &format!("{MINIMAL}[architecture]\nkind = 'softssd'\nfil_core = 5\n"),
            "d",
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "d: architecture.fil_core: core 5 does not exist (3 cores configured)");
        let e =
            DeviceConfig::from_toml(&MINIMAL.replace("channels = 2", "channels = 'two'"), "d").unwrap_err();
        assert!(e.to_string().starts_with("d:3:12: invalid type"), "{e}");
    }

    #[test]
    fn set_changes_a_kind_and_validates_the_result() {
        let c = DeviceConfig::from_toml(MINIMAL, "t").unwrap();
        let c = c.set("architecture.kind", "tradition").unwrap().set("architecture.cores", "2").unwrap();
        assert_eq!(c.architecture.name(3), "tradition-2");
        let e = c.set("architecture.cores", "8").unwrap_err().to_string();
        assert_eq!(
            e,
            "architecture.cores: tradition-8 needs 8 cores but the controller has 3 (controller.cores)"
        );
    }
}
