//! Zoned namespaces end to end (issue 29): fio job files with `zonemode=zbd` run as written,
//! the device WAF is exactly 1.0 where the conventional twin's is not, the report's zone
//! section, one-line errors, determinism.

use serde_json::Value;

use crate::{device_file, fails, ok};

/// 2 ch x 2 ways x 2 planes x 48 blocks x 32 pages of 16 KiB; zones over every die take a block
/// in each of the 8 planes (4 MiB of capacity, 4 MiB zones), 40 of them; 4 KiB blocks.
const ZNS: &str = r#"
name = "zns small"
[geometry]
channels = 2
ways = 2
dies = 1
planes = 2
blocks = 48
pages = 32
page_size = "16KiB"
[controller]
dram = "64MiB"
[host]
queues = 8
lba_size = "4KiB"
[ftl]
op = 0.15
mapping = { kind = "full" }
cache = { capacity = "1MiB" }
[ftl.zoned]
max_open = 6
max_active = 6
"#;

/// Random writes over at most 6 open zones, zones reset when every zone is full: three
/// times the capacity; the zone size is the host's for the conventional twin.
const JOBS: &str = "[global]
zonemode=zbd
zonesize=4m
direct=1
ioengine=io_uring

[zones]
end_fsync=1
rw=randwrite
bs=64k
iodepth=4
max_open_zones=6
io_size=480m
";

fn run(dir: &std::path::Path, extra: &[&str]) -> (String, Value) {
    let dev = device_file(dir, ZNS);
    let jobs = dir.join("zones.fio");
    std::fs::write(&jobs, JOBS).unwrap();
    let json = dir.join("r.json");
    let args = [
        "run",
        dev.to_str().unwrap(),
        "--job-file",
        jobs.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ];
    let text = ok(&[&args[..], extra].concat());
    (text, serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap())
}

#[test]
fn a_zbd_job_file_runs_as_written_with_a_device_waf_of_one() {
    let dir = tempfile::tempdir().unwrap();
    let (text, r) = run(dir.path(), &[]);
    assert!(text.contains("zones: 40 of 4MiB"), "{text}");
    let z = &r["zones"];
    assert_eq!(z["zones"], 40);
    assert!(z["stats"]["resets"].as_u64().unwrap() >= 40, "{z}");
    assert_eq!(r["gc"]["invocations"], 0);
    let waf = &r["waf"];
    let flash: u64 = waf["flash_units"].as_array().unwrap().iter().map(|u| u.as_u64().unwrap()).sum();
    // Units still in page buffers at the end are the only difference: none (64 KiB writes
    // fill whole pages), and no padding.
    assert_eq!(flash, waf["host_units"].as_u64().unwrap(), "{waf}");
    assert_eq!(waf["waf"], 1.0);
    assert_eq!(r["ops"]["write"]["errors"], 0);
    // The conventional twin, the same job over host-side zones (a reset deallocates): GC moves
    // data that streams of different zones left mixed in its blocks.
    let (_, conv) = run(dir.path(), &["--set", "ftl.zoned.enabled=false", "--precondition", "none"]);
    assert!(conv["zones"].is_null());
    let twin = conv["waf"]["waf"].as_f64().unwrap();
    eprintln!("zbd job: zoned WAF 1.0, conventional twin WAF {twin:.3}");
    assert!(twin > 1.05, "the twin's WAF {twin}");
}

#[test]
fn zoned_runs_are_deterministic() {
    let strip = |mut v: Value| {
        let o = v.as_object_mut().unwrap();
        o.remove("wall_time_s");
        o.remove("requests_per_wall_sec");
        v
    };
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (_, ra) = run(a.path(), &["--seed", "3"]);
    let (_, rb) = run(b.path(), &["--seed", "3"]);
    assert_eq!(strip(ra), strip(rb));
}

#[test]
fn zone_misconfigurations_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_file(dir.path(), ZNS);
    let d = dev.to_str().unwrap();
    let job = |text: &str| {
        let p = dir.path().join("j.fio");
        std::fs::write(&p, format!("[j]\n{text}\n")).unwrap();
        p
    };
    let jf = |text: &str| fails(&["run", d, "--job-file", job(text).to_str().unwrap()]);
    let e = jf("zonemode=zbd\nzonesize=4m\nrw=write\nbs=48k");
    assert!(e.contains("zonesize") && e.contains("not a multiple of the block size"), "{e}");
    let e = jf("zonemode=zbd\nzonesize=8m\nrw=write");
    assert!(e.contains("not the device's zone size"), "{e}");
    let e = jf("zonemode=zbd\nmax_open_zones=9\nrw=write");
    assert!(e.contains("more than the device's 6 open zones"), "{e}");
    let e = jf("zonemode=strided\nrw=write");
    assert!(e.contains("zonemode"), "{e}");
    let e = jf("fdp=1\nrw=write");
    assert!(e.contains("fdp_pli"), "{e}");
    let e = fails(&["run", d, "--set", "ftl.zoned.max_open=8", "--rw", "write"]);
    assert!(e.contains("8 open zones exceed the 6 active ones"), "{e}");
    let e = fails(&["run", d, "--set", "ftl.zoned.zone_size=6MB", "--rw", "write"]);
    assert!(e.contains("not a whole number of mapping units"), "{e}");
    let e = fails(&["run", d, "--set", "host.lba_size=512B", "--rw", "write"]);
    assert!(e.contains("logical blocks of one mapping unit"), "{e}");
    let e = fails(&["run", "softssd", "--job-file", job("zonemode=zbd\nrw=write").to_str().unwrap()]);
    assert!(e.contains("no zoned namespace"), "{e}");
    let e = fails(&["serve", d, "--image", dir.path().join("z.img").to_str().unwrap()]);
    assert!(e.contains("NBD cannot carry"), "{e}");
    let e = fails(&["run", d, "--precondition", "random-fill", "--rw", "write"]);
    assert!(e.contains("zoned namespace cannot be aged"), "{e}");
}
