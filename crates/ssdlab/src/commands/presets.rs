//! `ssdlab presets`: list or show the built-in devices.

use anyhow::{Result, bail};

pub fn run(name: Option<&str>) -> Result<()> {
    match name {
        None => {
            for n in firmware::presets::names() {
                let cfg = firmware::presets::get(n).expect("listed")?;
                let g = &cfg.geometry;
                println!(
                    "{n:<15} {:>8} raw, {:>2} ch x {} ways x {} dies x {} planes, {} {}  {}",
                    format!("{:#}", g.capacity()),
                    g.channels,
                    g.ways,
                    g.dies,
                    g.planes,
                    g.page_size,
                    cfg.timing.cell,
                    cfg.description
                );
            }
            println!("\nShow one with `ssdlab presets NAME`; copy one with `ssdlab config NAME > my.toml`.");
        }
        Some(n) => match firmware::presets::text(n) {
            Some(text) => print!("{text}"),
            None => bail!(
                "no preset named `{n}` (presets: {})",
                firmware::presets::names().collect::<Vec<_>>().join(", ")
            ),
        },
    }
    Ok(())
}
