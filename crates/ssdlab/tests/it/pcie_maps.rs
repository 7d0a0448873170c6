//! `ssdlab figure pcie-study --map-workers` (quick): the map of where the host-FTL card scales
//! with workers as the PCIe study measured, its table and its charts.

use serde_json::Value;

use crate::ok;

#[test]
fn the_workers_map_shows_a_serialising_host_limiting_scaling_and_draws_its_charts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("map");
    ok(&["figure", "pcie-study", "--quick", "--map-workers", "--out", out.to_str().unwrap()]);
    let rows: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(out.join("table.json")).unwrap()).unwrap();
    assert_eq!(rows.len(), 3 * 4 * 2, "host cores x host costs x two ratios");
    let iops = |cores: u32, us: u32| -> f64 {
        let metric = format!("{cores} host cores, {us} us to submit and complete: IOPS 4 workers / 1");
        let r =
            rows.iter().find(|r| r["metric"] == metric.as_str()).unwrap_or_else(|| panic!("no row {metric}"));
        r["measured"].as_str().unwrap().trim_start_matches('x').parse().unwrap()
    };
    // One host core spending 80 us per command caps four workers near two; eight cores do not.
    assert!(iops(1, 80) < 0.7 * iops(1, 4), "{} vs {}", iops(1, 80), iops(1, 4));
    assert!(iops(8, 80) > 1.5 * iops(1, 80), "{} vs {}", iops(8, 80), iops(1, 80));
    for chart in ["workers-map-iops.png", "workers-map-latency.png"] {
        let len = std::fs::metadata(out.join(chart)).unwrap().len();
        assert!(len > 10_000, "{chart}: {len} bytes");
    }
    // The same map again gives the same table.
    let again = dir.path().join("again");
    ok(&["figure", "pcie-study", "--quick", "--map-workers", "--out", again.to_str().unwrap()]);
    assert_eq!(
        std::fs::read_to_string(out.join("table.json")).unwrap(),
        std::fs::read_to_string(again.join("table.json")).unwrap()
    );
}

#[test]
fn one_map_at_a_time() {
    let out = crate::ssdlab(&["figure", "pcie-study", "--map-workers", "--map-queued"]);
    let e = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "clap usage error: {e}");
    assert!(e.contains("'--map-workers' cannot be used with '--map-queued'"), "{e}");
}
