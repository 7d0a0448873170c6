//! Trace replay end to end: the shared traces replay in both modes on the pipessd preset, a
//! hand-written trace shows every address adjustment counted, speed scales simulated time, and
//! bad lines stop the run with file and line (or are counted under --skip-bad-lines).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{SMALL, device_file, fails, ok};

/// The shared traces, if this checkout has them beside it.
fn shared(name: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces").join(name);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("shared trace {} not found; skipping", p.display());
        None
    }
}

fn report(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `ssdlab replay --precondition none TRACE DEVICE --json JSON EXTRA...` (which must succeed):
/// the report and what the command printed.
fn replay(trace: &Path, device: &str, json: &Path, extra: &[&str]) -> (Value, String) {
    let mut args = vec![
        "replay",
        "--precondition",
        "none",
        trace.to_str().unwrap(),
        device,
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend(extra);
    let out = ok(&args);
    (report(json), out)
}

#[test]
fn shared_traces_replay_in_both_modes_on_pipessd() {
    let dir = tempfile::tempdir().unwrap();
    for (name, records, reads) in
        [("websearch-sample.spc.gz", 24_783, 24_779), ("tpcc-sample.mqsim.trace.gz", 6_999, 4_381)]
    {
        let Some(trace) = shared(name) else { return };
        let mut sim_times = Vec::new();
        for mode in [["--mode", "timed"], ["--mode", "closed"]] {
            let (r, out) = replay(&trace, "pipessd", &dir.path().join("r.json"), &mode);
            assert!(out.contains(&format!("{records} records")), "{out}");
            let rp = &r["replay"];
            assert_eq!(rp["records"], records, "{name} {mode:?}");
            let vols: u64 =
                rp["volumes"].as_object().unwrap().values().map(|v| v["reads"].as_u64().unwrap()).sum();
            assert_eq!(vols, reads, "{name}: reads per volume add up");
            let done = r["total"]["count"].as_u64().unwrap();
            assert_eq!(done, rp["commands"].as_u64().unwrap(), "every command completed");
            assert!(r["cache"]["data"]["ratio"].as_f64().is_some());
            sim_times.push(r["sim_time_ns"].as_u64().unwrap());
        }
        // Closed loop ignores the timestamps: WebSearch's minute of trace replays in far less.
        if name.starts_with("websearch") {
            assert!(sim_times[1] * 10 < sim_times[0], "{sim_times:?}");
        }
    }
}

#[test]
fn a_hand_written_trace_counts_every_adjustment() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = device_file(dir.path(), SMALL);
    // MQSim: arrival_ns device lba sectors type(1 read, 0 write); CRLF, a comment, a blank
    // line, an unaligned request, a huge address, a zero-length request, unsorted times.
    let trace = dir.path().join("t.trace");
    #[rustfmt::skip]
    let lines = [
        "# hand-written", "",
        "0 0 0 8 0",                // 4 KiB write at 0: aligned
        "1000 0 1 16 0",            // unaligned: widened
        "2600 1 800000000000 8 1",  // far beyond the device: folded
        "3000 0 16 0 1",            // zero length: skipped
        "2500 2 64 16 1",           // earlier than the last replayed record
    ];
    std::fs::write(&trace, lines.join("\r\n")).unwrap();
    let json = dir.path().join("r.json");
    let rp = replay(&trace, cfg.to_str().unwrap(), &json, &[]).0["replay"].clone();
    assert_eq!(rp["format"], "mqsim");
    assert_eq!(rp["records"], 5);
    assert_eq!(rp["commands"], 4);
    assert_eq!(rp["widened"], 1);
    assert_eq!(rp["folded"], 1);
    assert_eq!(rp["skipped_zero_length"], 1);
    assert_eq!(rp["out_of_order"], 1);
    assert_eq!(rp["volumes"]["0"]["writes"], 2);
    assert_eq!(rp["volumes"]["2"]["read_bytes"], 8192);
    // Split instead of widen: the unaligned write becomes head, aligned middle and tail.
    let rp = replay(&trace, cfg.to_str().unwrap(), &json, &["--align", "split"]).0["replay"].clone();
    assert_eq!((rp["split"].as_u64(), rp["commands"].as_u64()), (Some(1), Some(6)));
}

#[test]
fn speed_scales_time_and_bad_lines_stop_or_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = device_file(dir.path(), SMALL);
    // SPC: ASU,LBA,Size,Opcode,Timestamp — one 4 KiB read per 10 ms for a second.
    let trace = dir.path().join("t.spc");
    let text: String = (0..100).map(|i| format!("0,{},4096,r,{:.3}\n", i * 8, i as f64 * 0.01)).collect();
    std::fs::write(&trace, &text).unwrap();
    let json = dir.path().join("r.json");
    let sim_time = |speed: &str| {
        replay(&trace, cfg.to_str().unwrap(), &json, &["--speed", speed]).0["sim_time_ns"].as_f64().unwrap()
    };
    let (x1, x2) = (sim_time("1"), sim_time("2"));
    assert!((x1 / x2 - 2.0).abs() < 0.05, "speed 2 halves the replay: {x1} vs {x2}");
    // A bad line: stop with file and line, or count and skip.
    std::fs::write(&trace, format!("{text}0,x1,4096,r,1.5\n0,8,4096,r,1.6\n")).unwrap();
    let e = fails(&["replay", "--precondition", "none", trace.to_str().unwrap(), cfg.to_str().unwrap()]);
    assert!(e.contains("t.spc:101") && e.contains("x1"), "{e}");
    let rp = replay(&trace, cfg.to_str().unwrap(), &json, &["--skip-bad-lines"]).0["replay"].clone();
    assert_eq!((rp["bad_lines_skipped"].as_u64(), rp["records"].as_u64()), (Some(1), Some(101)));
    // `run --trace` is the same replay; it refuses workload flags.
    let out = ok(&[
        "run",
        "--precondition",
        "none",
        cfg.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
        "--skip-bad-lines",
        "--mode",
        "closed",
    ]);
    assert!(out.contains("closed-loop 32"), "{out}");
    let e = crate::ssdlab(&["run", "--trace", trace.to_str().unwrap(), "--rw", "randread"]);
    assert!(!e.status.success());
}

/// Issue 27: a timed replay paid wall time for idle virtual time (the run loop stepped through
/// it 5 ms at a time: two records 1e7 s apart took 17 s, 1e8 s a few minutes). The loop now
/// steps from an idle moment straight to the next timer. Here the records 1e8 s apart: every
/// command is issued at its timestamp (no lag), completes with a flash-like latency, and shows
/// in the time series; the run ends just after the last record.
#[test]
fn records_far_apart_replay_on_time() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = device_file(dir.path(), SMALL);
    let trace = dir.path().join("t.trace");
    let gap: u64 = 100_000_000 * 1_000_000_000; // 1e8 s, in ns
    // MQSim: arrival_ns device lba sectors type(1 read, 0 write).
    let lines = [
        "0 0 0 8 0".to_string(),
        "1000 0 8 8 0".to_string(),
        format!("{gap} 0 0 8 1"),
        format!("{} 0 8 8 1", gap + 1_000_000),
        format!("{} 0 16 8 0", gap + 1_000_000),
    ];
    std::fs::write(&trace, lines.join("\n")).unwrap();
    let json = dir.path().join("r.json");
    let (r, _) = replay(&trace, cfg.to_str().unwrap(), &json, &[]);
    assert_eq!((r["replay"]["records"].as_u64(), r["replay"]["commands"].as_u64()), (Some(5), Some(5)));
    assert_eq!((r["ops"]["read"]["count"].as_u64(), r["ops"]["write"]["count"].as_u64()), (Some(2), Some(3)));
    assert_eq!(r["replay"]["lag_max_us"].as_f64(), Some(0.0), "every record issued at its timestamp");
    let end = r["sim_time_ns"].as_u64().unwrap();
    assert!(end > gap + 1_000_000 && end < gap + 2_000_000, "the run ends just after the last record: {end}");
    for op in ["read", "write"] {
        let worst = r["ops"][op]["latency_ns"]["max"].as_f64().unwrap();
        assert!(worst < 1e6, "no {op} waited through the gap: {worst} ns");
    }
    // The series has every completion, before and after the gap.
    let ts = &r["timeseries"];
    let t: Vec<f64> = ts["t_ms"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let iops: Vec<f64> = ts["iops"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let done: f64 = (0..t.len()).map(|i| iops[i] * (t[i] - if i == 0 { 0.0 } else { t[i - 1] }) / 1e3).sum();
    assert!((done - 5.0).abs() < 1e-6, "{done} completions in the series");
}
