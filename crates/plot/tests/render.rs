//! Rendering synthetic reports: every figure is written as a PNG that decodes and an SVG that
//! parses, figures without data are skipped with a reason, degenerate and non-finite data
//! still draw, and the same report gives the same bytes.

use std::path::Path;

use report::{OpReport, Report, Throughput};

/// A report with two operations, `intervals` time-series points, a wear histogram and
/// utilisation, on the softssd preset.
fn report(intervals: usize) -> Report {
    let device = firmware::presets::get("softssd").expect("preset").expect("valid");
    let value = serde_json::json!({
        "schema": report::SCHEMA, "ssdlab_version": "test", "seed": 1, "device": device,
        "workload": [], "initial_state": "fresh", "sim_time_ns": 0, "window_start_ns": 0,
        "window_ns": 0, "wall_time_s": 0.0, "requests_per_wall_sec": 0.0, "ops": {},
        "total": Throughput::default(), "waf": report::WafReport::default(),
        "gc": report::GcReport::default(), "wear": report::WearReport::default(),
        "cache": report::CacheReport::default(), "utilisation": report::Utilisation::default(),
        "flash": report::FlashReport::default(), "link": report::LinkReport::default(),
        "smart": {
            "data_units_read": 0, "data_units_written": 0, "host_read_commands": 0,
            "host_write_commands": 0, "media_errors": 0, "percentage_used": 0, "available_spare": 100
        },
        "timeseries": report::TimeSeriesReport::default(), "replay": null,
    });
    let mut r: Report = serde_json::from_value(value).expect("a report");
    for (op, scale) in [("read", 1.0), ("write", 3.0)] {
        let mut cdf: Vec<[f64; 2]> =
            (0..=100).map(|p| [p as f64 / 100.0, scale * (50_000.0 + 900.0 * p as f64)]).collect();
        cdf.extend(
            [0.995, 0.999, 0.9995, 0.9999, 0.99999f64]
                .map(|q| [q, scale * 200_000.0 / (1.0 - q).sqrt() / 10.0]),
        );
        r.ops.insert(
            op.into(),
            OpReport {
                throughput: Throughput { count: 1000, iops: 10_000.0, mb_per_s: 41.0 },
                bytes: 4096 * 1000,
                errors: 0,
                latency_ns: Default::default(),
                phases_ns: Default::default(),
                phases_p50_ns: Default::default(),
                phases_p99_ns: Default::default(),
                latency_cdf_ns: cdf,
            },
        );
    }
    let ts = &mut r.timeseries;
    ts.interval_ns = 1_000_000;
    for i in 0..intervals {
        let x = i as f64;
        ts.t_ms.push(x + 1.0);
        ts.read_iops.push(10_000.0 + 500.0 * (x / 3.0).sin());
        ts.write_iops.push(9_000.0 + 400.0 * (x / 5.0).cos());
        ts.iops.push(ts.read_iops[i] + ts.write_iops[i]);
        ts.mb_per_s.push(ts.iops[i] * 4096.0 / 1e6);
        ts.latency_mean_us.push(Some(80.0 + x));
        ts.latency_p99_us.push(if i % 7 == 3 { None } else { Some(300.0 + 2.0 * x) });
        ts.waf.push(Some(1.0 + (x / 10.0).min(1.5)));
        ts.free_blocks.push(400 - (i as u64 * 3).min(300));
        ts.gc_units_moved.push(if i > 10 { 50 + i as u64 } else { 0 });
        ts.erases.push(u64::from(i > 10));
        let w = firmware::power::Energy {
            nand: 2.0 + x / 20.0,
            controller: 0.5,
            link: 0.2,
            ..Default::default()
        };
        ts.power_w.push(&w);
    }
    r.waf.waf = 2.1;
    r.wear = report::WearReport {
        min: 2,
        mean: 3.4,
        max: 6,
        stddev: 0.9,
        histogram: vec![0, 0, 40, 300, 120, 30, 2],
    };
    r.utilisation.channels = vec![0.31, 0.35, 0.29, 0.4];
    r.utilisation.dies = (0..16).map(|d| 0.5 + d as f64 / 40.0).collect();
    r.utilisation.cores = vec![
        report::CoreLoad { name: "hil+ftl".into(), busy: 0.8, ..Default::default() },
        report::CoreLoad { name: "fil".into(), busy: 0.1, ..Default::default() },
    ];
    r
}

const NAMES: [&str; 7] = ["latency_cdf", "throughput", "latency_time", "gc", "wear", "utilisation", "power"];

/// Decodes the PNG and checks its size and that it is not one flat colour.
fn check_png(path: &Path, (w, h): (u32, u32)) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (w, h), "{}", path.display());
    let first = &buf[..3];
    assert!(buf[..info.buffer_size()].chunks(3).any(|p| p != first), "{}: one colour", path.display());
}

/// Parses the SVG and returns its texts.
fn svg_texts(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(|t| t.trim().to_string())
        .collect()
}

#[test]
fn every_figure_is_written_as_png_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let r = report(60);
    let out = plot::render(&r, dir.path()).unwrap();
    assert!(out.skipped.is_empty(), "{:?}", out.skipped);
    assert_eq!(out.files.len(), 14);
    let (figures, _) = plot::figures(&r);
    assert_eq!(figures.iter().map(|f| f.name()).collect::<Vec<_>>(), NAMES);
    for f in &figures {
        check_png(&dir.path().join(format!("{}.png", f.name())), f.size());
        let texts = svg_texts(&dir.path().join(format!("{}.svg", f.name())));
        assert!(texts.iter().any(|t| t == f.title()), "{}: {texts:?}", f.name());
    }
    let texts = svg_texts(&dir.path().join("gc.svg"));
    for label in
        ["WAF (ratio)", "free blocks (count)", "GC moves (units/s)", "simulated time (ms)", "whole run: 2.10"]
    {
        assert!(texts.iter().any(|t| t == label), "gc: no {label:?} in {texts:?}");
    }
    let texts = svg_texts(&dir.path().join("latency_cdf.svg"));
    for label in ["99%", "99.9%", "99.99%", "99.999%", "read", "write"] {
        assert!(texts.iter().any(|t| t == label), "cdf: no {label:?} in {texts:?}");
    }
}

#[test]
fn a_report_without_data_skips_every_figure_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = report(0);
    r.ops.clear();
    r.wear.histogram.clear();
    r.utilisation = Default::default();
    let out = plot::render(&r, dir.path()).unwrap();
    assert!(out.files.is_empty());
    let skipped: Vec<(&str, &str)> = out.skipped.iter().map(|s| (s.name, s.reason.as_str())).collect();
    assert_eq!(
        skipped,
        [
            ("latency_cdf", "no operation completed"),
            ("throughput", "the report has no time series"),
            ("latency_time", "the report has no time series"),
            ("gc", "the report has no time series"),
            ("wear", "the erase-count histogram is empty"),
            ("utilisation", "the report has no channel, die or core utilisation"),
            ("power", "the report has no power time series"),
        ]
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn degenerate_and_non_finite_data_still_draw() {
    let dir = tempfile::tempdir().unwrap();
    // One interval, a one-point CDF, every block erased the same number of times.
    let mut r = report(1);
    r.ops.get_mut("read").unwrap().latency_cdf_ns = vec![[0.0, 12_000.0]];
    r.wear.histogram = vec![0, 0, 0, 512];
    let out = plot::render(&r, dir.path()).unwrap();
    assert_eq!(out.files.len(), 14, "{:?}", out.skipped);
    // NaN and infinities where a buggy producer might put them.
    let mut r = report(20);
    r.timeseries.iops[3] = f64::NAN;
    r.timeseries.mb_per_s[4] = f64::INFINITY;
    r.timeseries.waf[5] = Some(f64::NAN);
    r.waf.waf = f64::INFINITY;
    r.utilisation.channels[0] = f64::NAN;
    r.ops.get_mut("write").unwrap().latency_cdf_ns.push([f64::NAN, 1.0]);
    let out = plot::render(&r, dir.path()).unwrap();
    assert_eq!(out.files.len(), 14);
    for name in NAMES {
        svg_texts(&dir.path().join(format!("{name}.svg")));
    }
}

#[test]
fn the_same_report_gives_the_same_bytes() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let r = report(40);
    plot::render(&r, a.path()).unwrap();
    plot::render(&r, b.path()).unwrap();
    for name in NAMES {
        for ext in ["png", "svg"] {
            let file = format!("{name}.{ext}");
            assert!(
                std::fs::read(a.path().join(&file)).unwrap() == std::fs::read(b.path().join(&file)).unwrap(),
                "{file}"
            );
        }
    }
}

#[test]
fn a_missing_directory_is_an_io_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir");
    let e = plot::render(&report(5), &missing).unwrap_err();
    assert!(matches!(e, plot::PlotError::Io { .. }), "{e:?}");
    assert!(e.to_string().contains("no/such/dir/latency_cdf.png"), "{e}");
}

#[test]
fn zoned_and_fdp_reports_add_their_figures() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = report(30);
    let mut z = firmware::ftl::zoned::ZoneReport {
        zones: 904,
        zone_size: 2 << 30,
        zone_capacity: 1077 << 20,
        by_state: [600, 12, 2, 0, 0, 290, 0],
        ..Default::default()
    };
    z.stats.resets = 40;
    z.stats.reset_erases = 40 * 64;
    z.stats.reset_ns = 40 * 3_000_000_000;
    r.zones = Some(z);
    r.fdp = Some(report::FdpReport {
        handles: 3,
        reclaim_groups: 1,
        isolation: "persistently".into(),
        ru_bytes: 64 << 20,
        per_handle: (0..3u16)
            .map(|h| report::FdpHandleReport {
                handle: h,
                host_bytes: 100 << 20,
                user_bytes: 100 << 20,
                gc_bytes: u64::from(h) * (30 << 20),
                media_bytes: (100 + u64::from(h) * 30) << 20,
                // A handle the host never wrote under has no WAF of its own.
                waf: (h > 0).then(|| 1.0 + f64::from(h) * 0.3),
                reclaim_units: 4,
            })
            .collect(),
        host_bytes: 300 << 20,
        media_bytes: 390 << 20,
        waf: 1.3,
        ..Default::default()
    });
    let out = plot::render(&r, dir.path()).unwrap();
    assert!(out.skipped.is_empty(), "{:?}", out.skipped);
    let (figures, _) = plot::figures(&r);
    let names: Vec<&str> = figures.iter().map(|f| f.name()).collect();
    assert_eq!(names[NAMES.len()..], ["zones", "fdp"]);
    for f in &figures[NAMES.len()..] {
        check_png(&dir.path().join(format!("{}.png", f.name())), f.size());
    }
    let texts = svg_texts(&dir.path().join("zones.svg"));
    for label in ["empty", "full", "600", "290", "zones (count)", "erases (blocks/s)", "latency (us)"] {
        assert!(texts.iter().any(|t| t == label), "zones: no {label:?} in {texts:?}");
    }
    assert!(texts.iter().any(|t| t.contains("904 zones of 2 GiB (capacity 1.1 GiB)")), "{texts:?}");
    assert!(texts.iter().any(|t| t.starts_with("Resets 40 (erased 2,560 blocks, 3.00 s each")), "{texts:?}");
    let texts = svg_texts(&dir.path().join("fdp.svg"));
    for label in
        ["RUH 0", "RUH 2", "1.300", "1.600", "no host writes", "device: 1.300", "bytes (MiB)", "WAF (ratio)"]
    {
        assert!(texts.iter().any(|t| t == label), "fdp: no {label:?} in {texts:?}");
    }

    // Without a time series the zone figure keeps its state panel and says what it left out.
    let mut r = report(0);
    r.zones = Some(firmware::ftl::zoned::ZoneReport {
        zones: 8,
        by_state: [8, 0, 0, 0, 0, 0, 0],
        ..Default::default()
    });
    let out = plot::render(&r, dir.path()).unwrap();
    assert!(out.files.iter().any(|f| f.ends_with("zones.svg")), "{:?}", out.skipped);
    let texts = svg_texts(&dir.path().join("zones.svg"));
    assert!(texts.iter().any(|t| t.contains("No time series")), "{texts:?}");
    assert!(!texts.iter().any(|t| t == "latency (us)"), "{texts:?}");
}
