//! `ssdlab config`: a fully resolved configuration, every default written out.

use anyhow::Result;

use crate::named_device;

pub fn run(name: Option<&str>, sets: &[String]) -> Result<()> {
    let cfg = super::run::settings(named_device::load(name)?, sets)?;
    println!(
        "# ssdlab device configuration, resolved from `{}`.",
        name.unwrap_or(named_device::DEFAULT_DEVICE)
    );
    println!("# Every field is shown; edit and run with `ssdlab run FILE`.\n");
    print!("{}", cfg.resolved().to_toml());
    Ok(())
}
