//! Finding a device: a preset name or a TOML file.

use std::path::Path;

use anyhow::{Context, Result, bail};
use firmware::config::DeviceConfig;
use firmware::platform::{Platform, StoreChoice};

use crate::cli::{CommonArgs, StoreArg};

/// The preset used when no device is named.
pub const DEFAULT_DEVICE: &str = "softssd";

/// Loads `name` (a preset, else a file), or the default preset.
pub fn load(name: Option<&str>) -> Result<DeviceConfig> {
    let name = name.unwrap_or(DEFAULT_DEVICE);
    if let Some(preset) = firmware::presets::get(name) {
        return Ok(preset?);
    }
    let path = Path::new(name);
    if !path.exists() {
        let presets: Vec<_> = firmware::presets::names().collect();
        bail!("no preset or file named `{name}` (presets: {})", presets.join(", "));
    }
    Ok(DeviceConfig::load(path)?)
}

/// Applies `--set KEY=VALUE` overrides to `cfg`, in order.
pub fn apply_sets(cfg: DeviceConfig, sets: &[String]) -> Result<DeviceConfig> {
    sets.iter().try_fold(cfg, |cfg, kv| {
        let (k, v) = kv.split_once('=').with_context(|| format!("--set {kv}: expected KEY=VALUE"))?;
        cfg.set(k.trim(), v.trim()).with_context(|| format!("--set {kv}"))
    })
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

/// Blocks per plane `ssdlab serve` starts from when `--blocks` is not given: softssd with 16
/// GiB of raw flash (an 8 GiB export), an image small enough for any disk.
pub const SERVE_BLOCKS: u32 = 16;

/// Shrinks (or grows) every plane to `blocks` blocks (`0`: keep the device's own), as
/// `--blocks` does for `run` and `serve`. Timing is unchanged. GC thresholds the device sets in
/// blocks (`gc.soft_free`, and `gc.hard_free` with it) are scaled by the same factor, rounded
/// up, so that GC keeps the same share of each plane free: an absolute threshold from a plane
/// of 2048 blocks would not fit one of 64.
pub fn set_blocks(cfg: &mut DeviceConfig, blocks: u32) -> Result<()> {
    let own = cfg.geometry.blocks;
    if blocks > 0 && blocks != own {
        cfg.geometry.blocks = blocks;
        let gc = &mut cfg.ftl.gc;
        if let Some(soft) = gc.soft_free {
            let scale = |n: u32| (u64::from(n) * u64::from(blocks)).div_ceil(u64::from(own.max(1))) as u32;
            gc.hard_free = scale(gc.hard_free).max(1);
            gc.soft_free = Some(scale(soft).max(gc.hard_free + 1));
        }
    }
    cfg.validate().with_context(|| format!("device {} with --blocks {blocks}", cfg.name))
}

/// The blocks per plane `serve` uses by default: [`SERVE_BLOCKS`], or the fewest above that
/// with which the device is valid (a preset with little over-provisioning needs more blocks
/// per plane to keep the spare blocks GC needs), at most the device's own.
pub fn serve_blocks(cfg: &DeviceConfig) -> u32 {
    let own = cfg.geometry.blocks;
    (SERVE_BLOCKS..own).find(|&b| set_blocks(&mut cfg.clone(), b).is_ok()).unwrap_or(own)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_has_a_valid_serving_size_and_softssd_keeps_16_blocks() {
        for name in firmware::presets::names() {
            let mut cfg = load(Some(name)).unwrap();
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
