//! Isolation knobs (issue 30, item 3): a job confined to channels, ways, dies and planes has
//! its data there (its writes, GC's copies of them and its part of a fill), so its flash work
//! stays there; two read flows on disjoint halves do not slow each other down in the back
//! end; `queue_priority` sets a queue's arbitration class; bad knobs fail in one line.

use serde_json::Value;

use crate::{device_file, fails, ok};

/// The small device's dies in flat order: channel 0 way 0, channel 0 way 1, channel 1 way 0,
/// channel 1 way 1.
const CH1_WAY0: usize = 2;

fn report(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn per_die(r: &Value, field: &str) -> Vec<u64> {
    r["flash"][field].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect()
}

/// Random overwrites confined to one die (channel 1, way 0) with a small data cache: every
/// program and erase is on that die, GC's included, although the fill put the rest of the
/// logical space everywhere.
#[test]
fn a_confined_flows_writes_and_gc_stay_on_its_die() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_file(dir.path(), crate::SMALL);
    let json = dir.path().join("r.json");
    #[rustfmt::skip]
    let args = [
        "run", dev.to_str().unwrap(), "--precondition", "seq-fill", "--seed", "3",
        "--set", "ftl.cache.capacity=1MiB",
        "--fio", "rw=randwrite", "--fio", "bs=4k", "--fio", "iodepth=16", "--fio", "number_ios=40000",
        "--fio", "size=10%", "--fio", "channels=1", "--fio", "ways=0",
        "--json", json.to_str().unwrap(),
    ];
    ok(&args);
    let r = report(&json);
    assert!(r["gc"]["units_moved"].as_u64().unwrap() > 0, "GC ran: {}", r["gc"]);
    let (programs, erases) = (per_die(&r, "die_programs"), per_die(&r, "die_erases"));
    assert!(programs[CH1_WAY0] > 0 && erases[CH1_WAY0] > 0, "{programs:?} {erases:?}");
    for d in (0..4).filter(|&d| d != CH1_WAY0) {
        assert_eq!(programs[d], 0, "die {d} programmed: {programs:?}");
        assert_eq!(erases[d], 0, "die {d} erased: {erases:?}");
    }
    assert_eq!(r["workload"][0]["confine"], serde_json::json!({"channels": [1], "ways": [0]}));
}

const HALVES: &str = "[global]
rw=randread
bs=4k
iodepth=16
number_ios=4000
size=50%

[t1]
offset=0
channels=0

[t2]
offset=50%
channels=1
";

/// `--alone` on two read flows: confined to disjoint channel halves (their data filled there)
/// each is as fast shared as alone; unconfined, the same flows slow each other down. The flows
/// add up to the device either way.
#[test]
fn disjoint_channel_halves_isolate_reads_and_shared_channels_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_file(dir.path(), crate::SMALL);
    let shared_jobs: String =
        HALVES.lines().filter(|l| !l.starts_with("channels=")).map(|l| format!("{l}\n")).collect();
    let mut slowdowns = Vec::new();
    for (name, jobs) in [("halves", HALVES), ("shared", shared_jobs.as_str())] {
        let file = dir.path().join(format!("{name}.fio"));
        std::fs::write(&file, jobs).unwrap();
        let json = dir.path().join(format!("{name}.json"));
        #[rustfmt::skip]
        ok(&["run", dev.to_str().unwrap(), "--precondition", "seq-fill", "--seed", "1",
             "--job-file", file.to_str().unwrap(), "--alone", "--json", json.to_str().unwrap()]);
        let r = report(&json);
        let flows = r["flows"].as_array().unwrap();
        for field in ["count", "bytes"] {
            let device = r["ops"]["read"][field].as_u64().unwrap();
            let sum: u64 = flows.iter().map(|f| f["ops"]["read"][field].as_u64().unwrap()).sum();
            assert_eq!(sum, device, "{name}: read {field}");
        }
        assert_eq!(flows.iter().map(|f| f["total"]["count"].as_u64().unwrap()).sum::<u64>(), 8000);
        slowdowns.push(flows.iter().map(|f| f["slowdown"].as_f64().unwrap()).collect::<Vec<_>>());
    }
    let (confined, shared) = (&slowdowns[0], &slowdowns[1]);
    assert!(confined.iter().all(|&s| s < 1.1), "confined halves: {confined:?}");
    assert!(shared.iter().all(|&s| s > 1.3), "shared channels: {shared:?}");
}

/// The same configuration, jobs and seed give the same report with confinement and priority
/// classes (wall-clock fields aside).
#[test]
fn isolation_knobs_are_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_file(dir.path(), crate::SMALL);
    let jobs = dir.path().join("j.fio");
    let with_prio = HALVES
        .replace("channels=0", "channels=0\nqueue_priority=urgent")
        .replace("channels=1", "channels=1\nqueue_priority=low");
    std::fs::write(&jobs, with_prio).unwrap();
    let run = |n: &str| {
        let json = dir.path().join(format!("{n}.json"));
        #[rustfmt::skip]
        ok(&["run", dev.to_str().unwrap(), "--precondition", "random-fill", "--seed", "4",
             "--set", "host.arbitration={kind=\"weighted\"}",
             "--job-file", jobs.to_str().unwrap(), "--json", json.to_str().unwrap()]);
        let mut r = report(&json);
        let o = r.as_object_mut().unwrap();
        assert!(o.remove("wall_time_s").is_some() && o.remove("requests_per_wall_sec").is_some());
        r
    };
    let (a, b) = (run("a"), run("b"));
    assert_eq!(a["workload"][0]["queue_priority"], "urgent");
    assert_eq!(a, b);
}

#[test]
fn bad_isolation_knobs_fail_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_file(dir.path(), crate::SMALL);
    let dev = dev.to_str().unwrap();
    let e = fails(&["run", dev, "--fio", "rw=randread", "--fio", "channels=2"]);
    assert!(e.contains("channels: the device has no channel 2 (it has 2 channels, 0 to 1)"), "{e}");
    let e = fails(&["run", dev, "--fio", "rw=randread", "--fio", "planes=0,5"]);
    assert!(e.contains("planes: the device has no plane 5"), "{e}");
    let e = fails(&["run", dev, "--fio", "rw=randread", "--fio", "queue_priority=urgent"]);
    assert!(e.contains("queue_priority needs weighted round robin arbitration"), "{e}");
    let e = fails(&["run", dev, "--fio", "rw=randread", "--fio", "queue_priority=soon"]);
    assert!(e.contains("expected urgent, high, medium or low"), "{e}");
    let e =
        fails(&["run", dev, "--set", "host.arbitration={kind=\"weighted\",low=0}", "--fio", "rw=randread"]);
    assert!(e.contains("weights must be at least 1"), "{e}");
    // Two jobs, one queue: their clones would share it with different planes.
    let jobs = dir.path().join("j.fio");
    std::fs::write(&jobs, HALVES).unwrap();
    let e = fails(&[
        "run",
        dev,
        "--precondition",
        "seq-fill",
        "--set",
        "host.queues=1",
        "--job-file",
        jobs.to_str().unwrap(),
    ]);
    assert!(e.contains("jobs t1 and t2 share queue 1"), "{e}");
    // Steady-state ageing does not place confined data (the default precondition).
    let e =
        fails(&["run", dev, "--precondition", "steady-state", "--fio", "rw=randread", "--fio", "channels=0"]);
    assert!(e.contains("steady-state preconditioning cannot place confined flows' data"), "{e}");
    // A fill cannot put a whole half of the logical space on one die of four.
    let e = fails(&[
        "run",
        dev,
        "--precondition",
        "seq-fill",
        "--fio",
        "rw=randread",
        "--fio",
        "size=50%",
        "--fio",
        "channels=0",
        "--fio",
        "ways=0",
    ]);
    assert!(e.contains("cannot hold its region"), "{e}");
}

/// The urgent class protects a latency-sensitive flow when the device's command slots are
/// limited (`host.device_commands`): a freed slot goes to the urgent queue first. Without the
/// limit every queue's commands are fetched at once and wait at the dies, class or not
/// (docs/multi-tenant.md).
#[test]
fn an_urgent_flow_keeps_its_latency_when_command_slots_are_limited() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_file(dir.path(), crate::SMALL);
    let jobs = "[global]\nbs=4k\nrw=randread\ntime_based=1\nruntime=200ms\n\
                [latency]\nqueue_priority=CLASS\niodepth=1\nrate_iops=2000\n\
                [bulk]\nqueue_priority=BULK\niodepth=64\nnumjobs=4\n";
    let slowdown = |class: &str, slots: Option<&str>| -> f64 {
        let file = dir.path().join(format!("{class}.fio"));
        // Urgent against low, or both in the same class.
        let bulk = if class == "urgent" { "low" } else { class };
        std::fs::write(&file, jobs.replace("CLASS", class).replace("BULK", bulk)).unwrap();
        let json = dir.path().join("r.json");
        let mut args = vec!["run", dev.to_str().unwrap(), "--precondition", "seq-fill", "--seed", "1"];
        args.extend(["--set", "host.arbitration={kind=\"weighted\"}", "--alone"]);
        let set = slots.map(|s| format!("host.device_commands={s}"));
        if let Some(s) = &set {
            args.extend(["--set", s.as_str()]);
        }
        args.extend(["--job-file", file.to_str().unwrap(), "--json", json.to_str().unwrap()]);
        ok(&args);
        report(&json)["flows"][0]["slowdown"].as_f64().unwrap()
    };
    let (urgent, medium) = (slowdown("urgent", Some("4")), slowdown("medium", Some("4")));
    assert!(urgent < 1.1 && urgent < 0.85 * medium, "4 slots: urgent {urgent:.3}, medium {medium:.3}");
    let (urgent, medium) = (slowdown("urgent", None), slowdown("medium", None));
    assert!((urgent - medium).abs() < 0.05 * medium, "no limit: urgent {urgent:.3}, medium {medium:.3}");
    let e = fails(&["run", dev.to_str().unwrap(), "--set", "host.device_commands=0", "--fio", "rw=randread"]);
    assert!(e.contains("device_commands") && e.contains("at least 1") && e.lines().count() == 1, "{e}");
}
