//! The device a command line names (a preset or a TOML file, through the library's
//! `ssdlab::setup`), the page store it asks for (`--store`, `--image`), and what the commands
//! that drive a single SSD check and default (`serve`'s blocks per plane).

use anyhow::{Context, Result, bail};
use firmware::config::DeviceConfig;
use firmware::platform::{Platform, StoreChoice};

use crate::cli::{CommonArgs, StoreArg};

pub use ssdlab::setup::{DEFAULT_DEVICE, serve_blocks, set_blocks};

/// Loads `name` (a preset, else a file), or the default preset.
pub fn load(name: Option<&str>) -> Result<DeviceConfig> {
    Ok(ssdlab::setup::load_device(name)?)
}

/// Fails unless `cfg` is a single SSD: `ssdlab COMMAND` drives one SSD's firmware.
pub fn single_ssd(cfg: &DeviceConfig, command: &str) -> Result<()> {
    if !cfg.system.is_ssd() {
        bail!(
            "{} is a {} system: `ssdlab {command}` drives a single SSD (run, replay and figure take any system)",
            cfg.name,
            cfg.system.kind()
        );
    }
    Ok(())
}

/// The page store the command line asks for.
pub fn store(common: &CommonArgs) -> Result<StoreChoice> {
    Ok(match (common.store, &common.image) {
        (StoreArg::Metadata, None) => StoreChoice::Metadata,
        (StoreArg::Memory, None) => StoreChoice::Memory,
        (StoreArg::Image, Some(path)) => StoreChoice::Image { path: path.clone(), create: !path.exists() },
        (StoreArg::Image, None) => bail!("--store image needs --image FILE"),
        (_, Some(_)) => bail!("--image is only meaningful with --store image"),
    })
}

/// Builds the platform for `cfg` with the store and seed from the command line.
pub fn build(cfg: &DeviceConfig, common: &CommonArgs) -> Result<Platform> {
    let store = store(common)?;
    Platform::build(cfg, &store, common.seed).with_context(|| format!("building device {}", cfg.name))
}

#[cfg(test)]
mod tests {
    use ssdlab::setup::SERVE_BLOCKS;

    use super::*;

    #[test]
    fn every_preset_has_a_valid_serving_size_and_softssd_keeps_16_blocks() {
        for name in firmware::presets::names() {
            let mut cfg = load(Some(name)).unwrap();
            if single_ssd(&cfg, "serve").is_err() {
                continue;
            }
            let blocks = serve_blocks(&cfg);
            set_blocks(&mut cfg, blocks).unwrap_or_else(|e| panic!("{name} with {blocks} blocks: {e:#}"));
            let raw = cfg.geometry.capacity().bytes();
            eprintln!("{name}: {blocks} blocks per plane, {} raw", sim::ByteSize(raw));
            assert!(blocks >= SERVE_BLOCKS && raw <= 64 << 30 << 1, "{name}: {blocks} blocks, {raw} bytes");
        }
        assert_eq!(serve_blocks(&load(Some("softssd")).unwrap()), SERVE_BLOCKS);
    }

    #[test]
    fn shrinking_scales_absolute_gc_thresholds() {
        let mut cfg = load(Some("mqsim-default")).unwrap();
        assert_eq!((cfg.ftl.gc.soft_free, cfg.ftl.gc.hard_free), (Some(102), 10));
        set_blocks(&mut cfg, 1024).unwrap();
        assert_eq!((cfg.ftl.gc.soft_free, cfg.ftl.gc.hard_free), (Some(51), 5));
        let mut cfg = load(Some("softssd")).unwrap();
        let hard = cfg.ftl.gc.hard_free;
        set_blocks(&mut cfg, 16).unwrap();
        assert_eq!((cfg.ftl.gc.soft_free, cfg.ftl.gc.hard_free), (None, hard), "relative defaults stay");
    }
}
