//! `ssdlab compare A.json B.json [C.json ...]`: reports side by side, each metric's change from
//! the first, and the settings that differ.

use anyhow::Result;
use report::compare::{compare, read_report, render};

use crate::cli::CompareArgs;

pub fn run(a: CompareArgs) -> Result<()> {
    let reports = a.reports.iter().map(|p| read_report(p)).collect::<Result<Vec<_>, _>>()?;
    let names: Vec<String> = a.reports.iter().map(|p| p.display().to_string()).collect();
    let comparison = compare(&names, &reports);
    match &a.json {
        Some(path) if path.as_os_str() == "-" => {
            println!("{}", serde_json::to_string_pretty(&comparison)?);
        }
        Some(path) => {
            super::write_json(path, &comparison)?;
            print!("{}", render(&comparison));
        }
        None => print!("{}", render(&comparison)),
    }
    Ok(())
}
