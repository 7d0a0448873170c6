//! Built-in device presets (TOML files shipped in `crates/firmware/presets/`, each citing
//! PRESETS.md for the published parameters and stating its own assumptions).

use crate::config::{DeviceConfig, LoadError};

/// Every preset: (name, TOML text).
pub const PRESETS: &[(&str, &str)] = &[
    ("softssd", include_str!("../presets/softssd.toml")),
    ("pipessd", include_str!("../presets/pipessd.toml")),
    ("pipessd-paper", include_str!("../presets/pipessd-paper.toml")),
    ("pipessd-paper-8ch", include_str!("../presets/pipessd-paper-8ch.toml")),
    ("hostftl-array", include_str!("../presets/hostftl-array.toml")),
    ("consumer-tlc", include_str!("../presets/consumer-tlc.toml")),
    ("consumer-tlc-fdp", include_str!("../presets/consumer-tlc-fdp.toml")),
    ("mqsim-default", include_str!("../presets/mqsim-default.toml")),
    ("fssd", include_str!("../presets/fssd.toml")),
    ("bssd", include_str!("../presets/bssd.toml")),
    ("sata-ssd", include_str!("../presets/sata-ssd.toml")),
    ("zns-zn540", include_str!("../presets/zns-zn540.toml")),
];

/// The preset named `name`, parsed and validated.
pub fn get(name: &str) -> Option<Result<DeviceConfig, LoadError>> {
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, text)| DeviceConfig::from_toml(text, &format!("preset {n}")))
}

/// The TOML text of the preset named `name`, comments included.
pub fn text(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Preset names.
pub fn names() -> impl Iterator<Item = &'static str> {
    PRESETS.iter().map(|(n, _)| *n)
}

#[cfg(test)]
mod tests {
    use crate::config::set::{Setting, apply_settings};

    #[test]
    fn every_preset_loads_and_is_named_after_its_file() {
        for name in super::names() {
            let cfg = super::get(name).unwrap().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(cfg.name, name);
        }
    }

    #[test]
    fn every_preset_survives_a_settings_round_trip() {
        for name in super::names() {
            let cfg = super::get(name).unwrap().unwrap();
            let same =
                apply_settings(&cfg, &[Setting::new("name", toml::Value::String(name.into()))]).unwrap();
            assert_eq!(same, cfg, "{name}");
        }
    }

    /// The PipeSSD paper gives its platform DRAM "a thousandth of the capacity"; both
    /// `pipessd-paper` presets keep that (rounded down to a MiB), split between the data cache
    /// and the mapping cache with room left for pending mapping updates.
    #[test]
    fn pipessd_paper_presets_keep_dram_a_thousandth_of_capacity() {
        use crate::ftl::config::MappingConfig;
        for (name, channels) in [("pipessd-paper", 4), ("pipessd-paper-8ch", 8)] {
            let cfg = super::get(name).unwrap().unwrap();
            assert_eq!(cfg.geometry.channels, channels, "{name}");
            assert_eq!(cfg.geometry.ways, 1, "{name}: one chip per channel");
            let raw = cfg.geometry.capacity().0;
            let dram = cfg.controller.dram.0;
            let thousandth = ((raw / 1000) >> 20) << 20;
            assert_eq!(dram, thousandth, "{name}: DRAM {dram} for {raw} bytes of flash");
            let MappingConfig::Dftl { cmt, .. } = &cfg.ftl.mapping else { panic!("{name}: DFTL") };
            let (cache, cmt) = (cfg.ftl.cache.capacity.0, cmt.0);
            assert!(
                cache + cmt < dram,
                "{name}: cache {cache} + CMT {cmt} leave no DRAM for pending updates"
            );
            assert!(cache >= 3 * cmt, "{name}: the `pipessd` preset's 3:1 split or more");
        }
    }
}
