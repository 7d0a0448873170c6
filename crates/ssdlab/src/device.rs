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
