//! `ssdlab compare A.json B.json [C.json ...]`: reports side by side, each metric's change from
//! the first, and the settings that differ. `ssdlab compare LIVE.rec SIM.csv`: a recording and
//! its replay, request by request (`compare_requests.rs`).

use anyhow::{Result, bail};
use report::compare::{compare, read_report, render};

use crate::cli::CompareArgs;

pub fn run(a: CompareArgs) -> Result<()> {
    if super::compare_requests::is_recording(&a.reports[0]) {
        if a.reports.len() != 2 || a.json.is_some() {
            bail!(
                "{} is a recording: compare it with its replay's per-request CSV, `ssdlab compare LIVE.rec SIM.csv \
                 [--per-request OUT.csv]` (no --json)",
                a.reports[0].display()
            );
        }
        return super::compare_requests::run(&a.reports[0], &a.reports[1], a.per_request.as_deref());
    }
    if let Some(p) = &a.per_request {
        bail!(
            "--per-request {}: for a recording and its replay (`ssdlab compare LIVE.rec SIM.csv`)",
            p.display()
        );
    }
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
