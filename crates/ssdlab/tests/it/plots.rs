//! Figures end to end: `run --plot DIR`, `replay --plot DIR` and `ssdlab plot REPORT --out
//! DIR` write every figure as a PNG that decodes to a picture (not a blank canvas) and an SVG
//! that parses and carries its axis labels; a report without data skips figures with a
//! reason; bad inputs fail with one line.

use std::path::Path;

use serde_json::Value;

use crate::{SMALL, device_file, fails, ssdlab};

/// The shared small device with a 256 KiB cache, so that short runs write back and collect.
fn small() -> String {
    format!("{SMALL}cache = {{ capacity = \"256KiB\" }}\n")
}

/// Each figure and axis descriptions its SVG must hold.
const FIGURES: [(&str, &[&str]); 7] = [
    (
        "latency_cdf",
        &["latency (us, log scale)", "percentile: commands at or below (%)", "percentile (nines scale)"],
    ),
    ("throughput", &["IOPS (commands/s)", "throughput (MB/s, 10^6 B/s)", "simulated time (ms)"]),
    ("latency_time", &["simulated time (ms)"]),
    ("gc", &["WAF (ratio)", "free blocks (count)", "GC moves (units/s)", "simulated time (ms)"]),
    ("wear", &["erase count (erases per block)", "blocks (count)"]),
    ("utilisation", &["channel (index)", "die (index)", "core", "busy (% of simulated time)"]),
    ("power", &["power (W)", "simulated time (ms)"]),
];

/// Runs `ssdlab` and returns stdout and stderr, asserting success.
fn run(args: &[&str]) -> (String, String) {
    let out = ssdlab(args);
    let (stdout, stderr) = (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap());
    assert!(out.status.success(), "ssdlab {args:?} failed: {stderr}");
    (stdout, stderr)
}

/// Checks the PNG decodes, is `width` wide and is not one flat colour.
fn check_png(path: &Path) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(info.width, 1200, "{}", path.display());
    assert!(info.height >= 400, "{}: {} px high", path.display(), info.height);
    let px = info.color_type.samples();
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(px).collect();
    let distinct: std::collections::BTreeSet<&[u8]> = pixels.iter().copied().collect();
    assert!(distinct.len() > 8, "{}: only {} colours", path.display(), distinct.len());
    let white = pixels.iter().filter(|p| p.iter().all(|&c| c == 255)).count();
    assert!(white < pixels.len() * 99 / 100, "{}: almost blank", path.display());
}

/// Checks the SVG parses and holds each of `labels` as a text.
fn check_svg(path: &Path, labels: &[&str]) {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect();
    for label in labels {
        assert!(texts.iter().any(|t| t == label), "{}: no text {label:?} in {texts:?}", path.display());
    }
}

/// Checks every figure in `dir`.
fn check_figures(dir: &Path) {
    for (name, labels) in FIGURES {
        check_png(&dir.join(format!("{name}.png")));
        check_svg(&dir.join(format!("{name}.svg")), labels);
    }
}

#[test]
fn run_with_plot_writes_every_figure_well_formed() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = device_file(tmp.path(), &small());
    let (json, figs) = (tmp.path().join("r.json"), tmp.path().join("figs/run"));
    #[rustfmt::skip]
    let (_, stderr) = run(&[
        "run", cfg.to_str().unwrap(), "--precondition", "steady-state", "--rw", "randrw", "--rwmixread", "30",
        "--number-ios", "3000",
        "--iodepth", "8", "--numjobs", "2", "--interval", "1ms",
        "--json", json.to_str().unwrap(), "--plot", figs.to_str().unwrap(),
    ]);
    assert!(stderr.contains(&format!("plots: 14 files in {}", figs.display())), "{stderr}");
    assert!(!stderr.contains("skipped"), "{stderr}");
    check_figures(&figs);

    // The saved report draws the same figures, and the same ones again, byte for byte. (Not
    // byte for byte the run's own: serde_json may read a float back 1 ULP off, which can move
    // a point by a pixel.)
    let (again, twice) = (tmp.path().join("again"), tmp.path().join("twice"));
    let (stdout, _) = run(&["plot", json.to_str().unwrap(), "--out", again.to_str().unwrap()]);
    assert_eq!(stdout.trim(), format!("plots: 14 files in {}", again.display()));
    run(&["plot", json.to_str().unwrap(), "--out", twice.to_str().unwrap()]);
    check_figures(&again);
    for (name, _) in FIGURES {
        for ext in ["png", "svg"] {
            let file = format!("{name}.{ext}");
            assert!(
                std::fs::read(again.join(&file)).unwrap() == std::fs::read(twice.join(&file)).unwrap(),
                "{file} differs between two plots of one report"
            );
        }
    }
}

#[test]
fn replay_with_plot_draws_the_trace_run() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = device_file(tmp.path(), &small());
    // MQSim: arrival_ns device lba sectors type (1 read, 0 write).
    let trace = tmp.path().join("t.trace");
    let lines: Vec<String> =
        (0..400u64).map(|i| format!("{} 0 {} 8 {}", i * 20_000, (i * 7919 % 4096) * 8, i % 3 % 2)).collect();
    std::fs::write(&trace, lines.join("\n")).unwrap();
    let figs = tmp.path().join("figs");
    #[rustfmt::skip]
    let (_, stderr) = run(&[
        "replay", "--precondition", "none", trace.to_str().unwrap(), cfg.to_str().unwrap(), "--plot", figs.to_str().unwrap(), "--interval", "1ms",
    ]);
    assert!(stderr.contains("plots: 14 files in"), "{stderr}");
    check_png(&figs.join("throughput.png"));
    check_svg(&figs.join("latency_cdf.svg"), &["latency (us, log scale)"]);
}

#[test]
fn figures_without_data_are_skipped_with_reasons() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("r.json");
    run(&[
        "run",
        "--precondition",
        "none",
        "pipessd",
        "--rw",
        "randread",
        "--number-ios",
        "50",
        "--numjobs",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    // Strip the report of its operations, series, histogram and utilisation.
    let mut r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    r["ops"] = serde_json::json!({});
    for col in r["timeseries"].as_object_mut().unwrap().values_mut() {
        if col.is_array() {
            *col = serde_json::json!([]);
        }
    }
    r["wear"]["histogram"] = serde_json::json!([]);
    r["utilisation"] = serde_json::json!({"channels": [], "dies": [], "cores": []});
    let empty = tmp.path().join("empty.json");
    std::fs::write(&empty, r.to_string()).unwrap();
    let out = tmp.path().join("out");
    let (stdout, _) = run(&["plot", empty.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(stdout.starts_with(&format!("plots: 0 files in {}", out.display())), "{stdout}");
    for (name, reason) in [
        ("latency_cdf", "no operation completed"),
        ("throughput", "the report has no time series"),
        ("gc", "the report has no time series"),
        ("wear", "the erase-count histogram is empty"),
        ("utilisation", "no channel, die or core utilisation"),
    ] {
        assert!(stdout.contains(&format!("skipped {name}: ")), "{stdout}");
        let line = stdout.lines().find(|l| l.contains(&format!("skipped {name}:"))).unwrap();
        assert!(line.contains(reason), "{line}");
    }
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
}

#[test]
fn degenerate_runs_still_draw() {
    // 5 commands: one interval, a CDF of a few points, idle channels.
    let tmp = tempfile::tempdir().unwrap();
    let figs = tmp.path().join("figs");
    #[rustfmt::skip]
    let (_, stderr) = run(&[
        "run", "--precondition", "none", "pipessd", "--rw", "randrw", "--number-ios", "5", "--numjobs", "1", "--iodepth", "1",
        "--plot", figs.to_str().unwrap(),
    ]);
    assert!(stderr.contains("plots: 14 files in"), "{stderr}");
    for (name, _) in FIGURES {
        check_png(&figs.join(format!("{name}.png")));
    }
    // A run this short is drawn in microseconds.
    check_svg(&figs.join("throughput.svg"), &["simulated time (us)"]);
}

#[test]
fn bad_reports_and_directories_fail_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let missing = tmp.path().join("missing.json");
    let e = fails(&["plot", missing.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(e.contains("missing.json"), "{e}");
    let garbage = tmp.path().join("garbage.json");
    std::fs::write(&garbage, "{ not json").unwrap();
    let e = fails(&["plot", garbage.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(e.contains("garbage.json") && e.contains("not a valid ssdlab report"), "{e}");
    let other = tmp.path().join("other.json");
    std::fs::write(&other, r#"{"schema": "ssdlab.report/0"}"#).unwrap();
    let e = fails(&["plot", other.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(e.contains("other.json") && e.contains("ssdlab.report/0"), "{e}");
    // --out names a file.
    let json = tmp.path().join("r.json");
    run(&[
        "run",
        "--precondition",
        "none",
        "pipessd",
        "--number-ios",
        "20",
        "--numjobs",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    let e = fails(&["plot", json.to_str().unwrap(), "--out", garbage.to_str().unwrap()]);
    assert!(e.contains("garbage.json is not a directory"), "{e}");
    let e = fails(&[
        "run",
        "--precondition",
        "none",
        "pipessd",
        "--number-ios",
        "20",
        "--numjobs",
        "1",
        "--plot",
        garbage.to_str().unwrap(),
    ]);
    assert!(e.contains("is not a directory"), "{e}");
}

#[test]
fn a_device_with_bit_errors_gets_the_ecc_figure() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = device_file(tmp.path(), &small());
    let figs = tmp.path().join("figs");
    #[rustfmt::skip]
    let (_, stderr) = run(&[
        "run", cfg.to_str().unwrap(), "--set", "timing.cell=tlc", "--set", "ecc.errors={}",
        "--precondition", "steady-state:100", "--rw", "randrw", "--number-ios", "3000", "--iodepth", "16",
        "--interval", "1ms", "--plot", figs.to_str().unwrap(),
    ]);
    assert!(stderr.contains("plots: 16 files in"), "{stderr}");
    assert!(!stderr.contains("skipped"), "{stderr}");
    check_png(&figs.join("ecc.png"));
    check_svg(
        &figs.join("ecc.svg"),
        &["RBER (log scale)", "% of reads / of time", "P/E cycles (mean)", "simulated time (ms)"],
    );
}
