//! Bad input gives one-line errors naming the field or line; nothing panics.

use crate::fails;

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

const GOOD: &str = "name = 'x'\n[geometry]\nchannels = 2\nways = 1\nblocks = 8\npages = 16\npage_size = '16KiB'\n[ftl]\nop = 0.9\ncache = { capacity = '1MiB' }\n";

#[test]
fn unknown_device_lists_the_presets() {
    let e = fails(&["phys", "no-such-device"]);
    assert!(e.contains("no preset or file named `no-such-device` (presets: softssd"), "{e}");
}

#[test]
fn impossible_geometries_and_timings_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (GOOD.replace("channels = 2", "channels = 0"), "geometry.channels: must be at least 1 (got 0)"),
        (GOOD.replace("'16KiB'", "'10000B'"), "geometry.page_size: must be a multiple of mapping_unit"),
        (
            format!("{GOOD}[timing]\nt_prog = ['1us', '2us', '3us']\n"),
            "timing.t_prog: mlc cells have 2 page types",
        ),
        (
            format!("{GOOD}[timing]\nbus_width = 7\n"),
            "timing.bus_width: must be 8, 16, 32 or 64 bits (got 7)",
        ),
        (format!("{GOOD}[timing]\nt_erase = '0'\n"), "timing.t_erase: must be greater than 0"),
        (format!("{GOOD}[timing]\nt_read = 'fast'\n"), "invalid value `fast`: expected a duration"),
        (format!("{GOOD}[controller]\ncores = []\n"), "controller.cores: at least one core is needed"),
        (
            format!("{GOOD}[controller]\ncores = [{{ name = 'a', clock = '0Hz' }}]\n"),
            "controller.cores[0].clock",
        ),
        (format!("{GOOD}colour = 'blue'\n"), ":11:1: unknown field `colour`"),
        (
            GOOD.replace("op = 0.9", "op = 0"),
            "ftl.op: over-provisioning must be between 0 and 1, exclusive (got 0)",
        ),
        (
            GOOD.replace("op = 0.9", "op = -0.1"),
            "ftl.op: over-provisioning must be between 0 and 1, exclusive (got -0.1)",
        ),
        (
            GOOD.replace("op = 0.9", "op = 0.01"),
            "ftl.op: each plane keeps 0.1 spare blocks but GC needs at least 6",
        ),
        (
            GOOD.replace("'1MiB'", "'2GiB'"),
            "ftl.cache.capacity: the data cache and mapping table (with its pending updates) need 2052MiB but the controller has 1GiB of DRAM",
        ),
        (format!("{GOOD}[host]\nqueues = 0\n"), "host.queues: must be 1 to 1024 (got 0)"),
        (format!("{GOOD}[host]\nlba_size = '1KiB'\n"), "host.lba_size: must be 512B or 4KiB (got 1KiB)"),
        (
            format!("{GOOD}[architecture]\nkind = 'softssd'\necc_core = 7\n"),
            "architecture.ecc_core: core 7 does not exist",
        ),
        (
            GOOD.replace("[ftl]", "[ftl]\nmapping = { kind = 'dftl', cmt = '16B' }"),
            "ftl.mapping.cmt: must hold at least four segments",
        ),
        (
            GOOD.replace("[ftl]", "[ftl]\nallocation = { kind = 'static', order = 'CWXP' }"),
            "ftl.allocation.order: must be a permutation of C, W, D and P",
        ),
        (GOOD.replace("[ftl]", "[ftl]\ngc = { victim = 'oldest' }"), "unknown variant `oldest`"),
        ("name = 'x'\n[geometry\n".to_string(), ":2:"),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let path = write(&dir, &format!("c{i}.toml"), text);
        let e = fails(&["phys", &path]);
        assert!(e.contains(want), "case {i}: want {want:?}, got {e}");
    }
}

#[test]
fn impossible_workloads_name_the_flag() {
    let e = fails(&["phys", "--channels", "99"]);
    assert!(e.contains("workload: channels: must be between 1 and 8 (got 99)"), "{e}");
    let e = fails(&["phys", "--qd", "0"]);
    assert!(e.contains("workload: qd: must be at least 1"), "{e}");
    let e = fails(&["phys", "--rate=-5"]);
    assert!(e.contains("workload: rate: must be a positive number"), "{e}");
    let e = fails(&["phys", "--read-bytes", "lots"]);
    assert!(e.contains("--read-bytes"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "small.toml", GOOD);
    let e = fails(&["phys", &path, "--op", "program", "--count", "1000000"]);
    assert!(e.contains("workload: count: 1000000 programs do not fit"), "{e}");
}

#[test]
fn malformed_job_files_and_flags_name_the_line_or_option() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "[global]\nbs=4k\n[a]\nrw=randread\nverify_backlog=4\n",
            "job.fio:5: unsupported option 'verify_backlog'",
        ),
        ("[a]\nrw=sideways\n", "job.fio:2:"),
        ("[a]\niodepth=lots\n", "job.fio:2:"),
        ("bs=4k\n", "job.fio:1:"),
        ("[a]\nstonewall\n[b]\n", "job.fio:2:"),
        ("; only a comment\n", "no jobs"),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let path = dir.path().join("job.fio");
        std::fs::write(&path, text).unwrap();
        let e = fails(&["run", "--job-file", path.to_str().unwrap()]);
        assert!(e.contains(want), "case {i}: want {want:?}, got {e}");
    }
    let e = fails(&["run", "--rw", "sideways"]);
    assert!(e.contains("--rw") && e.contains("sideways"), "{e}");
    let e = fails(&["run", "--fio", "verify_backlog=4"]);
    assert!(e.contains("verify_backlog"), "{e}");
    let e = fails(&["run", "--size", "200%"]);
    assert!(e.contains("size"), "{e}");
}

#[test]
fn bad_gc_pacing_settings_are_one_line_errors() {
    for (set, want) in [
        ("ftl.gc.worthwhile_stale=1.5", "ftl.gc.worthwhile_stale: must be a fraction"),
        ("ftl.gc.worthwhile_stale=-0.1", "ftl.gc.worthwhile_stale: must be a fraction"),
        ("ftl.gc.pacing=lazy", "expected `eager` or `paced`"),
        ("ftl.gc.admit_free=0", "ftl.gc.admit_free: must be from gc.hard_free"),
        ("ftl.mapping.pending=-1MiB", "ftl.mapping.pending: invalid value `-1MiB`"),
        ("ftl.mapping.pending=4GiB", "with its pending updates) need"),
    ] {
        let e = fails(&["run", "softssd", "--set", set]);
        assert!(e.contains(want) && e.trim().lines().count() == 1, "--set {set}: {e}");
    }
}

#[test]
fn image_store_errors_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let junk = write(&dir, "junk.img", "not an image");
    let e = fails(&["phys", "--store", "image", "--image", &junk]);
    assert!(e.contains("not a usable ssdlab NAND image"), "{e}");
    let e = fails(&["phys", "--store", "image"]);
    assert!(e.contains("--store image needs --image FILE"), "{e}");
}

/// The text after some `: ` that the message already said before it (`X: X`), if any.
fn repeated(message: &str) -> Option<&str> {
    let message = message.trim_end();
    message.match_indices(": ").map(|(i, _)| &message[i + 2..]).find(|tail| {
        let head = &message[..message.len() - tail.len() - 2];
        tail.len() >= 8 && head.contains(*tail)
    })
}

#[test]
fn repeated_detects_a_cause_said_twice() {
    assert_eq!(repeated("ssdlab: a.fio: no such file: no such file\n"), Some("no such file"));
    assert_eq!(
        repeated("ssdlab: job 'j': bs: too small: job 'j': bs: too small"),
        Some("job 'j': bs: too small")
    );
    assert_eq!(repeated("ssdlab: reading a.fio: no such file or directory"), None);
}

#[test]
fn errors_say_their_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    let dev = write(&dir, "small.toml", crate::SMALL);
    let missing = dir.path().join("missing");
    let missing = missing.to_str().unwrap();
    let fresh = ["run", dev.as_str(), "--precondition", "none"];
    let cases: Vec<Vec<&str>> = vec![
        [&fresh[..], &["--bs", "3"]].concat(),
        [&fresh[..], &["--rw", "sideways"]].concat(),
        [&fresh[..], &["--iodepth", "0"]].concat(),
        [&fresh[..], &["--random-distribution", "zipf:x"]].concat(),
        [&fresh[..], &["--offset", "100T"]].concat(),
        [&fresh[..], &["--time-based"]].concat(),
        [&fresh[..], &["--job-file", missing]].concat(),
        vec!["run", dev.as_str(), "--state", missing],
        vec!["sweep", "plot", missing, "--x", "a", "--y", "b"],
        vec!["plot", missing, "--out", missing],
        vec!["compare", missing, missing],
    ];
    for args in cases {
        let e = fails(&args);
        assert_eq!(repeated(&e), None, "ssdlab {args:?}: {e}");
    }
}

/// Issue 26: `ssdlab run --bs 3` failed only after a minute of ageing softssd to GC steady
/// state, and so did `ssdlab age --bs 3`. The workload and the output options are now checked
/// on the built device before it is aged: the error is the only line, with no "ageing
/// softssd ..." note before it.
#[test]
fn a_bad_workload_fails_before_the_device_is_aged() {
    let want = "ssdlab: job 'default': bs: read block size 3 is not a multiple of the 512-byte LBA size\n";
    assert_eq!(fails(&["run", "--bs", "3"]), want);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.state");
    let age = ["age", "--precondition", "steady-state", "--out", out.to_str().unwrap(), "--bs", "3"];
    assert_eq!(fails(&age), want);
    assert!(!out.exists());
    let e = fails(&["run", "--interval", "0s"]);
    assert!(e.contains("--interval must be above zero"), "{e}");
    let e = fails(&["run", "--trace-events", "t.json", "--trace-from", "2ms", "--trace-until", "1ms"]);
    assert!(e.contains("--trace-until must be after --trace-from"), "{e}");
}

/// Issue 26: `ssdlab age pipessd --out /nonexistent/x.state` aged the device for a minute and
/// then could not save it. Output paths are checked before anything is built: the error is
/// the only line (no "ageing ..." note before it).
#[test]
fn unwritable_outputs_fail_before_the_device_is_aged() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let plain = write(&dir, "plain", "not a directory");
    let state = missing.join("x.state");
    let e = fails(&["age", "pipessd", "--out", state.to_str().unwrap()]);
    let want = format!("--out {}: directory {} does not exist", state.display(), missing.display());
    assert!(e.contains(&want), "{e}");
    let json = missing.join("r.json");
    let e = fails(&["run", "--json", json.to_str().unwrap()]);
    assert!(e.contains(&format!("--json {}: directory", json.display())), "{e}");
    let figs = format!("{plain}/figs");
    let e = fails(&["replay", "trace.spc", "--plot", &figs]);
    assert!(e.contains(&format!("--plot {figs}: {plain} is not a directory")), "{e}");
    let e = fails(&["run", "--per-request", dir.path().to_str().unwrap()]);
    assert!(e.contains("--per-request") && e.contains(": is a directory"), "{e}");
    assert!(!missing.exists());
}

/// Issue 26: a trace whose last line was malformed failed after the whole replay (and the
/// ageing before it). The trace is now read once before the device is built: the error is
/// the only line, with no "ageing pipessd ..." note before it.
#[test]
fn a_bad_last_trace_line_fails_before_the_device_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let good: String = (0..100).map(|i| format!("0,{},4096,r,{:.3}\n", i * 8, i as f64 * 0.01)).collect();
    let trace = write(&dir, "t.spc", &format!("{good}0,x1,4096,r,1.5\n"));
    let e = fails(&["replay", &trace, "pipessd"]);
    assert_eq!(e, format!("ssdlab: {trace}:101: bad LBA 'x1'\n"));
    let e = fails(&["run", "pipessd", "--trace", &trace, "--mode", "closed"]);
    assert_eq!(e, format!("ssdlab: {trace}:101: bad LBA 'x1'\n"));
    // --skip-bad-lines: counted, and said.
    let dev = write(&dir, "small.toml", crate::SMALL);
    let out = crate::ssdlab(&["replay", &trace, &dev, "--precondition", "none", "--skip-bad-lines"]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr, format!("warning: 1 bad line skipped (the first: {trace}:101: bad LBA 'x1')\n"));
}

/// Issue 26: a replay of zero commands exited 0 with an empty report. It is an error now,
/// found before the device is built.
#[test]
fn a_trace_with_nothing_to_replay_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(&dir, "empty.spc", "# no records\n");
    let e = fails(&["replay", &empty, "pipessd", "--format", "spc"]);
    assert_eq!(e, format!("ssdlab: {empty}: nothing to replay (the trace has no records)\n"));
    let zero = write(&dir, "zero.spc", "0,8,0,w,0.05\n");
    let e = fails(&["replay", &zero, "pipessd"]);
    assert_eq!(e, format!("ssdlab: {zero}: nothing to replay (1 record: 0 flushes, 1 of zero length)\n"));
    let bad = write(&dir, "bad.spc", "0,x,4096,w,0.05\n");
    let e = fails(&["replay", &bad, "pipessd", "--skip-bad-lines", "--format", "spc"]);
    let want =
        format!("nothing to replay (no records; 1 bad line skipped (the first: {bad}:1: bad LBA 'x'))");
    assert!(e.contains(&want), "{e}");
    let e = fails(&["replay", &zero, "pipessd", "--max-records", "0"]);
    assert!(e.contains("--max-records must be at least 1"), "{e}");
}

/// Issue 26: timestamps running backwards were noted only in the report's `out_of_order`. A
/// timed replay now warns with their count and the first line; a closed-loop replay, which
/// ignores timestamps, does not.
#[test]
fn backwards_timestamps_are_warned_about_in_timed_replays() {
    let dir = tempfile::tempdir().unwrap();
    let dev = write(&dir, "small.toml", crate::SMALL);
    let trace = write(&dir, "t.spc", "0,0,4096,r,0.3\n0,8,4096,r,0.1\n0,16,4096,r,0.2\n0,24,4096,r,0.4\n");
    let json = dir.path().join("r.json");
    let replay = |mode: &str| {
        let args = [
            "replay",
            &trace,
            &dev,
            "--precondition",
            "none",
            "--mode",
            mode,
            "--json",
            json.to_str().unwrap(),
        ];
        let out = crate::ssdlab(&args);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(out.status.success(), "{stderr}");
        stderr
    };
    assert_eq!(
        replay("timed"),
        format!(
            "warning: {trace}: 2 requests are timestamped before an earlier one (the first at line 2); \
             a timed replay issues them at once\n"
        )
    );
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["replay"]["out_of_order"], 2, "the warning counts what the report counts");
    assert_eq!(replay("closed"), "");
}

/// Issue 26: options that change nothing were accepted silently. `--size 100T` on a smaller
/// device ran exactly as without `--size` (the default job's own 8 GiB is still cut to a
/// smaller device: that is the default, not something the user asked for); `--speed` with
/// `--mode closed` and `--depth` with a timed replay were ignored; `sweep -j 0` ran one worker.
/// Each is a one-line error now, before any ageing.
#[test]
fn options_that_would_change_nothing_are_refused() {
    let e = fails(&["run", "--size", "100T"]);
    let want =
        "job 'default': size: 100TiB is larger than the device's capacity of 512GiB (549756239872 bytes)";
    assert!(e.contains(want), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let job = write(&dir, "big.fio", "[big]\nrw=randread\nsize=1p\n");
    let e = fails(&["run", "--job-file", &job]);
    assert!(e.contains("job 'big': size: 1PiB is larger than the device's capacity"), "{e}");
    let dev = write(&dir, "small.toml", crate::SMALL);
    crate::ok(&["run", &dev, "--precondition", "none"]); // the default job: 8 GiB on 218 MiB
    let trace = write(&dir, "t.spc", "0,0,4096,r,0.1\n");
    let e = fails(&["replay", &trace, "pipessd", "--mode", "closed", "--speed", "2"]);
    assert!(e.contains("--speed is for timed replays; --mode closed ignores the trace's timestamps"), "{e}");
    let e = fails(&["run", "pipessd", "--trace", &trace, "--depth", "64"]);
    assert!(e.contains("--depth is for --mode closed; a timed replay (the default) issues at"), "{e}");
    let e = fails(&["sweep", "nope.toml", "-j", "0"]);
    assert!(e.contains("-j/--workers must be at least 1 (got 0)"), "{e}");
    let sweep = write(&dir, "s.toml", "workers = 0\n[base]\ndevice = 'softssd'\n");
    let e = fails(&["sweep", &sweep, "--dry-run"]);
    assert!(e.contains("workers: must be at least 1 (got 0)"), "{e}");
}

/// Issue 26: messages that named the wrong cause or too little of the path.
/// `--time-budget 0s` said "`0s` is not a duration"; one SPC line with a huge LBA said only
/// "cannot detect the trace format" (forcing `--format spc` gave the real cause); `sweep plot
/// nope-results` named `sweep.json` without its directory.
#[test]
fn messages_name_the_real_cause() {
    let e = fails(&["sweep", "nope.toml", "--time-budget", "0s"]);
    assert_eq!(e, "ssdlab: --time-budget: must be positive (got `0s`)\n");
    let dir = tempfile::tempdir().unwrap();
    let huge = write(&dir, "huge.spc", "0,999999999999999999999,4096,r,0.1\n");
    let cause = format!("{huge}:1: LBA '999999999999999999999' is too large (does not fit in u64 bytes)");
    let e = fails(&["replay", &huge, "pipessd"]);
    assert_eq!(e, format!("ssdlab: {cause} (the line looks like spc; --format forces a format)\n"));
    assert_eq!(fails(&["replay", &huge, "pipessd", "--format", "spc"]), format!("ssdlab: {cause}\n"));
    let e = fails(&["sweep", "plot", "nope-results", "--x", "a", "--y", "b"]);
    assert_eq!(e, "ssdlab: nope-results: not found (expected a sweep's results directory or table)\n");
    // An error found on the built device is the only line: the trace's warnings wait for it.
    let back = write(&dir, "back.spc", "0,0,4096,r,0.3\n0,8,4096,r,0.1\n");
    let e = fails(&["replay", &back, "pipessd", "--placement", "group:1"]);
    assert!(e.contains("placement group:1: this device places writes itself"), "{e}");
    // Not a saved state: it said "cannot start from the saved state: ...".
    let e = fails(&["run", "hostftl-array", "--precondition", "steady-state"]);
    assert_eq!(
        e,
        "ssdlab: a host-side FTL starts fresh (--precondition none); age it with a simulated workload\n"
    );
    let table = write(&dir, "results.csv", "run\n");
    let e = fails(&["sweep", "plot", &table, "--x", "a", "--y", "b"]);
    assert!(e.contains(&format!("{}: No such file", dir.path().join("sweep.json").display())), "{e}");
}

#[test]
fn gc_theory_figure_options_out_of_range_give_one_line_errors() {
    let e = fails(&["figure", "gc-theory", "--dftl-op", "1.5"]);
    assert!(e.contains("--dftl-op must be between 0 and 1 (got 1.5)"), "{e}");
    let e = fails(&["figure", "gc-theory", "--pages", "1"]);
    assert!(e.contains("--pages must be at least 2 (got 1)"), "{e}");
    let e = fails(&["figure", "gc-theory", "--blocks", "8"]);
    assert!(e.contains("--blocks must be at least 128 (got 8)"), "{e}");
}

#[test]
fn pts_refuses_nonsense_settings_and_targets() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(&dir, "empty.img", "");
    let disk = write(&dir, "disk.img", &"x".repeat(1 << 16));
    let cases: [(&[&str], &str); 9] = [
        (&["pts", "--max-rounds", "0"], "--max-rounds must be at least 1 (the PTS runs up to 25)"),
        (&["pts", "--point-time", "0"], "--point-time must be above zero"),
        (&["pts", "--point-time", "soon"], "--point-time: 'soon' is not a duration such as 60s"),
        (&["pts", "--threads", "0"], "--threads and --iodepth must be at least 1"),
        (&["pts", "--wsat-capacity-multiple", "0"], "--wsat-capacity-multiple must be above zero"),
        (&["pts", "--wsat-max-time", "0s"], "--wsat-max-time must be above zero"),
        (&["pts", "--target", "/nonexistent/disk"], "opening /nonexistent/disk: No such file"),
        (&["pts", "--target", &empty], "the target is empty"),
        (&["pts", "--target", &disk, "--fio", "/nonexistent/fio"], "running /nonexistent/fio: No such file"),
    ];
    for (args, want) in cases {
        let e = fails(args);
        assert!(e.contains(want), "{args:?}: {e}");
    }
    // A block device needs --destroy-data (checked wherever the machine has one to name).
    use std::os::unix::fs::FileTypeExt;
    let block = std::fs::read_dir("/dev")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device()));
    if let Some(dev) = block {
        let e = fails(&["pts", "--target", dev.to_str().unwrap()]);
        assert!(e.contains("is a block device: the PTS TRIMs and overwrites all of it"), "{e}");
    }
}

/// Issue 28: the reliability stack's configuration errors are one line naming the field.
#[test]
fn impossible_error_models_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let good = GOOD.replace("page_size = '16KiB'", "page_size = '16KiB'\noob_size = '1KiB'");
    let rber = |e: &str, a: &str| {
        format!(
            "rber = {{ e = {e}, a = {a}, k = 1.0, b = 0.0, m = 1.0, n = 1.0, c = 0.0, p = 1.0, q = 1.0 }}"
        )
    };
    let cases = [
        (
            "[ecc]\ncorrectable = 40\n[ecc.errors]\n".to_string(),
            "ecc.correctable: 40 bits per 512B codeword need 2080 parity bytes per 16384-byte page, and the FTL's records 64: more than the 1024-byte OOB (geometry.oob_size) holds",
        ),
        (format!("[ecc.errors]\n{}\n", rber("nan", "0.0")), "ecc.errors.rber.e: must be a finite number >= 0 (got NaN)"),
        (format!("[ecc.errors]\n{}\n", rber("0.0", "-1.0")), "ecc.errors.rber.a: must be a finite number >= 0 (got -1)"),
        (
            "[ecc.errors]\nretry = { steps = [] }\n".to_string(),
            "ecc.errors.retry.steps: must list at least one step when retry is enabled (or set enabled = false)",
        ),
        (
            "[ecc.errors]\nwear_out = { rated_pe = 3000, program_fail_at_rated = 2.0, erase_fail_at_rated = 0.0, exponent = 3.0 }\n"
                .to_string(),
            "ecc.errors.wear_out.program_fail_at_rated: must be a probability in [0, 1] (got 2)",
        ),
        (
            "[ftl.refresh]\nthreshold = 0\n".to_string(),
            "ftl.refresh.threshold: must be a fraction of ecc.correctable in (0, 1] (got 0)",
        ),
    ];
    for (i, (extra, want)) in cases.iter().enumerate() {
        let path = write(&dir, &format!("e{i}.toml"), &format!("{good}{extra}"));
        let e = fails(&["phys", &path]);
        assert!(e.contains(want), "case {i}: want {want:?}, got {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "case {i}: one line: {e}");
    }
}
