//! Finding a device: a preset name or a TOML file; `--blocks` to shrink it.

use std::path::Path;

use firmware::config::{DeviceConfig, LoadError};
use sim::config::ConfigError;

/// The preset used when no device is named.
pub const DEFAULT_DEVICE: &str = "softssd";

/// Why a device could not be found or changed.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// Neither a preset nor an existing file.
    #[error("no preset or file named `{name}` (presets: {presets})")]
    NotFound {
        /// The name as given.
        name: String,
        /// The preset names, comma separated.
        presets: String,
    },
    /// The preset or file does not parse or is not a valid device.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The device is not valid with `--blocks`.
    #[error("device {device} with --blocks {blocks}: {error}")]
    Blocks {
        /// The device's name.
        device: String,
        /// Blocks per plane asked for.
        blocks: u32,
        /// The first bad field.
        error: ConfigError,
    },
}

/// Loads `name` (a preset, else a file), or the default preset.
pub fn load_device(name: Option<&str>) -> Result<DeviceConfig, DeviceError> {
    let name = name.unwrap_or(DEFAULT_DEVICE);
    if let Some(preset) = firmware::presets::get(name) {
        return Ok(preset?);
    }
    let path = Path::new(name);
    if !path.exists() {
        let presets: Vec<_> = firmware::presets::names().collect();
        return Err(DeviceError::NotFound { name: name.to_string(), presets: presets.join(", ") });
    }
    Ok(DeviceConfig::load(path)?)
}

/// Shrinks (or grows) every plane to `blocks` blocks (`0`: keep the device's own), as
/// `--blocks` does for `run`, `serve` and `sweep`. Timing is unchanged. GC thresholds the
/// device sets in blocks (`gc.soft_free`, and `gc.hard_free` with it) are scaled by the same
/// factor, rounded up, so that GC keeps the same share of each plane free: an absolute
/// threshold from a plane of 2048 blocks would not fit one of 64.
pub fn set_blocks(cfg: &mut DeviceConfig, blocks: u32) -> Result<(), DeviceError> {
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
    cfg.validate().map_err(|error| DeviceError::Blocks { device: cfg.name.clone(), blocks, error })
}

/// Blocks per plane `ssdlab serve` (and `calibrate`) starts from when `--blocks` is not given:
/// softssd with 16 GiB of raw flash (an 8 GiB export), an image small enough for any disk.
pub const SERVE_BLOCKS: u32 = 16;

/// The blocks per plane `serve` uses by default: [`SERVE_BLOCKS`], or the fewest above that
/// with which the device is valid (a preset with little over-provisioning needs more blocks
/// per plane to keep the spare blocks GC needs), at most the device's own.
pub fn serve_blocks(cfg: &DeviceConfig) -> u32 {
    let own = cfg.geometry.blocks;
    (SERVE_BLOCKS..own).find(|&b| set_blocks(&mut cfg.clone(), b).is_ok()).unwrap_or(own)
}
