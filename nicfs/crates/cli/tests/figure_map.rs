//! `nicfs figure map --small --out DIR`: the front-end map's tables on standard output and its
//! three charts in DIR.

use std::process::Command;

use nicfs::mount::scratch_dir;

#[test]
fn the_front_end_map_prints_its_tables_and_draws_its_charts() {
    let dir = scratch_dir().join(format!("nicfs-figure-map-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_nicfs"))
        .args(["figure", "--small", "map", "--out", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("| 4 front ends / 1 (2 front ends: ") && text.contains("| 4.0 |"), "{text}");
    assert!(text.contains("without the pipeline over with") && text.contains("| 1650 |"), "{text}");
    for chart in ["front-ends-by-switch.png", "front-ends-by-speed.png", "pipeline-by-patch.png"] {
        let len = std::fs::metadata(dir.join(chart)).map(|m| m.len()).unwrap_or(0);
        assert!(len > 10_000, "{chart}: {len} bytes");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
