//! `ssdlab sweep`: expansion, bad input before any run, failure isolation, resuming, and
//! results identical to single `ssdlab run`s.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::{SMALL, fails, ok};

/// A directory with the small device and a sweep file `s.toml` over it.
fn setup(sweep: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small.toml"), SMALL).unwrap();
    let file = dir.path().join("s.toml");
    std::fs::write(&file, sweep).unwrap();
    (dir, file)
}

const BASE: &str = "[base]\ndevice = \"small.toml\"\n\
    workload = { rw = \"randwrite\", number_ios = 1500, numjobs = 1, size = \"100%\" }\n";

fn sweep_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ssdlab"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("ssdlab runs")
}

/// The fields of one CSV line (quoted fields hold no line breaks in these tests).
fn fields(line: &str) -> Vec<String> {
    let (mut out, mut field, mut quoted, mut chars) =
        (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => field.push(chars.next().unwrap()),
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    out.push(field);
    out
}

/// The rows of a CSV table as header -> value.
fn csv_rows(path: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = fields(lines.next().unwrap());
    lines.map(|l| header.iter().cloned().zip(fields(l)).collect()).collect()
}

fn deterministic(path: &Path) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("wall_time_s").unwrap();
    o.remove("requests_per_wall_sec").unwrap();
    v
}

#[test]
fn grids_zips_and_ranges_expand_as_listed() {
    let axes = "[[axis]]\nkey = \"ftl.op\"\nvalues = { from = 0.1, to = 0.3, step = 0.1 }\n\
        [[axis]]\nkey = \"workload.iodepth\"\nvalues = [1, 8, 32]\n";
    let (_d, file) = setup(&format!("seeds = {{ from = 1, to = 2 }}\n{BASE}{axes}"));
    let out = ok(&["sweep", file.to_str().unwrap(), "--dry-run"]);
    assert!(
        out.starts_with(&format!("sweep {}: 18 runs over ftl.op (3) x workload.iodepth (3)", file.display())),
        "{out}"
    );
    let rows: Vec<Vec<&str>> = out.lines().skip(2).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), 18);
    assert_eq!(rows[0][..4], ["0", "0.1", "1", "1"]);
    assert_eq!(rows[1][..4], ["1", "0.1", "1", "2"], "seeds vary fastest");
    assert_eq!(rows[2][..4], ["2", "0.1", "8", "1"], "then the last axis");
    assert_eq!(rows[17][..5], ["17", "0.3", "32", "2", "to"], "0.1 + 2 x 0.1 is written 0.3");
    let hashes: std::collections::BTreeSet<&str> = rows.iter().map(|r| r[6]).collect();
    assert_eq!(hashes.len(), 18, "every run has its own inputs");

    let (_d, file) = setup(&format!("combine = \"zip\"\n{BASE}{axes}"));
    let out = ok(&["sweep", file.to_str().unwrap(), "--dry-run"]);
    let rows: Vec<Vec<&str>> = out.lines().skip(2).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(
        rows.iter().map(|r| (r[1], r[2])).collect::<Vec<_>>(),
        [("0.1", "1"), ("0.2", "8"), ("0.3", "32")]
    );

    let commands = ok(&["sweep", file.to_str().unwrap(), "--dry-run", "--commands"]);
    let first = commands.lines().next().unwrap();
    assert!(
        first.contains("--set ftl.op=0.1")
            && first.contains("--fio iodepth=1")
            && first.ends_with("--seed 1"),
        "{first}"
    );
}

#[test]
fn bad_input_is_one_error_before_any_run() {
    let cases = [
        (
            "[[axis]]\nkey = \"ftl.opp\"\nvalues = [0.1]\n",
            "axis ftl.opp: value 0.1: ftl.opp: unknown field `opp`, expected one of `op`",
        ),
        ("[[axis]]\nkey = \"ftl.op\"\nvalues = []\n", "axis ftl.op: no values (an axis needs at least one)"),
        (
            "[[axis]]\nkey = \"ftl.op\"\nvalues = [0.1, \"lots\"]\n",
            "axis ftl.op: value lots: ftl.op: invalid type: string \"lots\", expected f64",
        ),
        (
            "[[axis]]\nkey = \"geometry.blocks\"\nvalues = [64, 1.5]\n",
            "axis geometry.blocks: value 1.5: geometry.blocks: invalid type: floating point `1.5`",
        ),
        (
            "[[axis]]\nkey = \"workload.iodepth\"\nvalues = [\"deep\"]\n",
            "axis workload.iodepth: value deep: option 'iodepth': invalid value 'deep'",
        ),
        (
            "[[axis]]\nkey = \"workload.colour\"\nvalues = [1]\n",
            "axis workload.colour: value 1: unsupported option 'colour'",
        ),
        (
            "[[axis]]\nkey = \"ftl.op\"\nvalues = { from = 0.5, to = 0.1, step = 0.1 }\n",
            "axis ftl.op: no values",
        ),
        (
            "[[axis]]\nkey = \"ftl.op\"\nvalues = [0.2, 0.01]\n",
            "run 1 (ftl.op=0.01, seed 1): ftl.op: each plane keeps",
        ),
        (
            "combine = \"zip\"\n[[axis]]\nkey = \"ftl.op\"\nvalues = [0.1, 0.2]\n[[axis]]\nkey = \"blocks\"\nvalues = [64]\n",
            "combine = \"zip\" needs axes of one length",
        ),
        ("[[axis]]\nkey = \"seed\"\nvalues = [1]\n", "axis seed: seeds are not an axis"),
        ("bogus = 1\n", ":1:1: unknown field `bogus`"),
    ];
    for (i, (axes, want)) in cases.iter().enumerate() {
        let text = if axes.starts_with('[') { format!("{BASE}{axes}") } else { format!("{axes}{BASE}") };
        let (dir, file) = setup(&text);
        let e = fails(&["sweep", file.to_str().unwrap()]);
        assert!(e.contains(want), "case {i}: want {want:?}, got {e}");
        assert!(!dir.path().join("s-results").exists(), "case {i}: nothing ran");
    }
}

#[test]
fn a_failing_run_is_recorded_and_the_sweep_goes_on() {
    // Up to 100,000 passes over 16 MiB: the second value runs for minutes.
    let sweep = "seeds = [1, 2]\n[[axis]]\nkey = \"workload.number_ios\"\nvalues = [1500, 100000000]\n\
        [base]\ndevice = \"small.toml\"\nworkload = { rw = \"randwrite\", numjobs = 1, size = \"16m\", loops = 100000 }\n";
    let (dir, file) = setup(sweep);
    let args = ["sweep", file.to_str().unwrap(), "--csv", "--time-budget", "3s"];
    let out = sweep_env(&args, &[(ssdlab::sweep::PANIC_SEED_VAR, "2")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("4 runs: 4 ran (3 failed)"), "{stdout}");
    let rows = csv_rows(&dir.path().join("s-results/results.csv"));
    let status: Vec<(&str, &str)> =
        rows.iter().map(|r| (r["status"].as_str(), r["error"].as_str())).collect();
    assert_eq!(status[0], ("ok", ""));
    assert!(
        status[1].0 == "failed" && status[1].1.starts_with("panicked: SSDLAB_TEST_PANIC_SEED=2 (at "),
        "{status:?}"
    );
    assert_eq!(status[2], ("failed", "exceeded the time budget of 3s (killed)"));
    assert_eq!(status[3].0, "failed");
    assert!(!rows[0]["waf"].is_empty() && rows[1]["waf"].is_empty(), "failed runs have no metrics");

    // Over its memory budget: softssd at 128 blocks per plane (128 GiB of flash) being aged
    // holds more than 32 MiB.
    let (dir, file) = setup("[base]\ndevice = \"softssd\"\nblocks = 128\n");
    let out = ok(&["sweep", file.to_str().unwrap(), "--csv", "--memory-budget", "32MiB"]);
    assert!(out.contains("1 ran (1 failed)"), "{out}");
    let rows = csv_rows(&dir.path().join("s-results/results.csv"));
    assert!(
        rows[0]["error"].starts_with("exceeded the memory budget of 32.0MiB (resident "),
        "{:?}",
        rows[0]
    );
}

#[test]
fn a_second_invocation_runs_nothing_and_a_grown_sweep_only_the_new_runs() {
    let axis = "[[axis]]\nkey = \"ftl.gc.victim\"\nvalues = [\"greedy\", \"fifo\"]\n";
    let (dir, file) = setup(&format!("{BASE}{axis}"));
    let f = file.to_str().unwrap();
    assert!(ok(&["sweep", f, "--csv"]).contains("2 runs: 2 ran, 0 had results on disk"));
    let table = dir.path().join("s-results/results.csv");
    let first = std::fs::read_to_string(&table).unwrap();
    let reports: Vec<PathBuf> =
        csv_rows(&table).iter().map(|r| dir.path().join("s-results").join(&r["report"])).collect();
    let before: Vec<String> = reports.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect();
    assert!(ok(&["sweep", f, "--csv"]).contains("2 runs: 0 ran, 2 had results on disk; nothing to run"));
    assert_eq!(std::fs::read_to_string(&table).unwrap(), first, "the same table");
    let after: Vec<String> = reports.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect();
    assert_eq!(after, before, "reports untouched (their wall-clock fields would differ if rerun)");
    let dry = ok(&["sweep", f, "--dry-run"]);
    assert_eq!(dry.matches(" done ").count(), 2, "{dry}");

    std::fs::write(&file, format!("{BASE}{}", axis.replace("\"fifo\"]", "\"fifo\", \"cost-benefit\"]")))
        .unwrap();
    assert!(ok(&["sweep", f, "--csv"]).contains("3 runs: 1 ran, 2 had results on disk"));
    assert_eq!(csv_rows(&table).len(), 3);
}

#[test]
fn the_table_and_reports_match_single_runs_with_the_same_seed() {
    let axes = "seeds = [1, 2]\n[[axis]]\nkey = \"ftl.op\"\nvalues = [0.1, 0.2]\n";
    let (dir, file) = setup(&format!("{axes}{BASE}"));
    ok(&["sweep", file.to_str().unwrap(), "--csv", "--workers", "2"]);
    let rows = csv_rows(&dir.path().join("s-results/results.csv"));
    assert_eq!(rows.len(), 4);
    let device = dir.path().join("small.toml");
    for row in rows.iter().filter(|r| r["ftl.op"] == "0.2") {
        let json = dir.path().join(format!("seed{}.json", row["seed"]));
        let set = format!("ftl.op={}", row["ftl.op"]);
        ok(&[
            "run",
            device.to_str().unwrap(),
            "--set",
            &set,
            "--rw",
            "randwrite",
            "--number-ios",
            "1500",
            "--numjobs",
            "1",
            "--size",
            "100%",
            "--seed",
            &row["seed"],
            "--json",
            json.to_str().unwrap(),
        ]);
        let single = deterministic(&json);
        assert_eq!(
            deterministic(&dir.path().join("s-results").join(&row["report"])),
            single,
            "seed {}",
            row["seed"]
        );
        let num = |v: &serde_json::Value| v.as_f64().unwrap();
        assert_eq!(row["waf"].parse::<f64>().unwrap(), num(&single["waf"]["waf"]));
        assert_eq!(row["iops"].parse::<f64>().unwrap(), num(&single["total"]["iops"]));
        assert_eq!(
            row["write_p99_us"].parse::<f64>().unwrap(),
            num(&single["ops"]["write"]["latency_ns"]["p99"]) / 1e3
        );
        assert_eq!(row["gc_invocations"].parse::<f64>().unwrap(), num(&single["gc"]["invocations"]));
    }
    let (a, b) = (&rows[0], &rows[1]);
    assert_ne!(a["waf"].clone() + &a["write_p99_us"], b["waf"].clone() + &b["write_p99_us"], "seeds differ");
}

#[test]
fn sweep_plot_draws_a_metric_against_an_axis() {
    let axes = "seeds = [1, 2]\n[[axis]]\nkey = \"ftl.op\"\nvalues = [0.1, 0.2]\n\
        [[axis]]\nkey = \"ftl.gc.victim\"\nvalues = [\"greedy\", \"fifo\"]\n";
    let (dir, file) = setup(&format!("{axes}{BASE}"));
    ok(&["sweep", file.to_str().unwrap()]);
    let results = dir.path().join("s-results");
    let r = results.to_str().unwrap();
    let out = ok(&["sweep", "plot", r, "--x", "ftl.op", "--y", "waf", "--hue", "ftl.gc.victim"]);
    assert_eq!(out.trim(), format!("plot: {}", results.join("waf-by-ftl.op-ftl.gc.victim.png").display()));
    let svg = dir.path().join("w.svg");
    ok(&[
        "sweep",
        "plot",
        r,
        "--x",
        "ftl.gc.victim",
        "--y",
        "write_p99_us",
        "--where",
        "ftl.op=0.2",
        "--out",
        svg.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("greedy") && text.contains("fifo") && text.contains("write_p99_us"));
    let e = fails(&["sweep", "plot", r, "--x", "ftl.op", "--y", "waf"]);
    assert!(e.contains("axis `ftl.gc.victim` has 2 values here"), "{e}");
    let e = fails(&["sweep", "plot", r, "--x", "ftl.op", "--y", "wafer", "--hue", "ftl.gc.victim"]);
    assert!(e.contains("no column `wafer`"), "{e}");
}

/// Every sweep file in `examples/` plans: its device, axes and workload are valid settings
/// (a dry run checks every run's spec), so an example cannot rot as the settings change.
#[test]
fn the_example_sweeps_plan() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut planned = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if path.extension().is_some_and(|e| e == "toml") && text.contains("[[axis]]") {
            let out = tempfile::tempdir().unwrap();
            let args = ["sweep", path.to_str().unwrap(), "--dry-run", "--out", out.path().to_str().unwrap()];
            let listed = ok(&args);
            assert!(listed.contains(" runs over "), "{}: {listed}", path.display());
            planned.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    planned.sort();
    assert_eq!(planned, ["op-gc.toml", "pipessd-paper-map.toml", "pipessd-threads.toml"]);
}
