//! `ssdlab figure pcie-study`: the PCIe SSD design study (PRESETS.md, "Profiles fssd / bssd").

use anyhow::Result;

use super::FigureOpts;
use super::lab::Lab;

pub fn run(o: &FigureOpts) -> Result<()> {
    let lab = Lab::new("pcie-study", o)?;
    lab.finish()
}
