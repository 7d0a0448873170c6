//! Flash work per flow (issue 30): every flash transaction counts for the flow that caused it or
//! for no flow, and the flows and the unattributed bucket add up to the device's `flash`
//! exactly; a read-only flow programs nothing; single-flow reports do not change.

use serde_json::Value;

use crate::{device_file, ok};

/// A random reader and a random writer on the two halves of the seq-filled small device; the
/// writer overwrites its half six times, so GC collects blocks it wrote itself.
const TWO: &str = "[global]
bs=4k
size=50%
iodepth=8

[reader]
rw=randread
number_ios=20000
offset=0

[writer]
rw=randwrite
number_ios=150000
loops=6
offset=50%
";

/// The same flows, each confined to one channel (and its half placed there by the fill).
const HALVES: &str = "[global]
bs=4k
size=50%
iodepth=8

[reader]
rw=randread
number_ios=20000
offset=0
channels=0

[writer]
rw=randwrite
number_ios=60000
loops=3
offset=50%
channels=1
";

/// Runs `jobs` on the seq-filled small device with `seed` and returns the report.
fn run(dir: &std::path::Path, jobs: &str, seed: &str) -> (String, Value) {
    let dev = device_file(dir, crate::SMALL);
    let file = dir.join("jobs.fio");
    std::fs::write(&file, jobs).unwrap();
    let json = dir.join(format!("r{seed}.json"));
    let text = ok(&[
        "run",
        dev.to_str().unwrap(),
        "--precondition",
        "seq-fill",
        "--job-file",
        file.to_str().unwrap(),
        "--seed",
        seed,
        "--json",
        json.to_str().unwrap(),
    ]);
    (text, serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap())
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn the_flows_flash_work_and_the_unattributed_rest_add_up_to_the_device() {
    let dir = tempfile::tempdir().unwrap();
    let (text, r) = run(dir.path(), TWO, "3");
    let flows = r["flows"].as_array().expect("flows");
    assert_eq!(flows.len(), 2);
    let rest = &r["flows_unattributed"];
    // Requests and bytes: each command in exactly one flow.
    for op in ["read", "write"] {
        for field in ["count", "bytes"] {
            let sum: u64 = flows.iter().map(|f| f["ops"][op][field].as_u64().unwrap_or(0)).sum();
            assert_eq!(sum, u(&r["ops"][op][field]), "{op} {field}");
        }
    }
    // Flash operations, in total and by source: the flows plus no flow's are the device's.
    let sum = |key: &str| flows.iter().map(|f| u(&f["flash"][key])).sum::<u64>() + u(&rest[key]);
    for key in ["reads", "programs", "erases"] {
        assert_eq!(sum(key), u(&r["flash"][key]), "{key}");
    }
    for s in 0..3 {
        let by = |v: &Value| u(&v["by_source"][s]);
        let total = flows.iter().map(|f| by(&f["flash"])).sum::<u64>() + by(rest);
        assert_eq!(total, u(&r["flash"]["by_source"][s]), "by_source[{s}]");
    }
    // GC's reads and programs, summed, are the device's GC transactions less its erases.
    let gc = sum("gc_reads") + sum("gc_programs") + sum("erases");
    assert_eq!(gc, u(&r["flash"]["by_source"][2]), "GC reads + programs + erases");
    // Who caused what: the reader only reads (one page a 4 KiB read, no cache hits: nothing was
    // written into its half); the writer programs, and collects blocks it wrote.
    let (reader, writer) = (&flows[0]["flash"], &flows[1]["flash"]);
    // The fields python/ssdlab/_report.pyi declares as FlowFlash, in both places.
    for v in [reader, rest] {
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let declared = [
            "by_source",
            "erases",
            "gc_programs",
            "gc_reads",
            "program_bytes",
            "programs",
            "read_bytes",
            "reads",
        ];
        assert_eq!(keys, declared, "{v}");
    }
    // One page read a 4 KiB read, plus the translation pages its lookups loaded into the CMT
    // (DFTL), which count for the flow whose lookup missed.
    assert_eq!(u(&reader["by_source"][0]), 20000, "{reader}");
    assert!(u(&reader["by_source"][1]) > 0, "the reader's CMT misses read translation pages: {reader}");
    assert_eq!(u(&reader["reads"]), 20000 + u(&reader["by_source"][1]), "{reader}");
    assert_eq!((u(&reader["programs"]), u(&reader["erases"])), (0, 0), "{reader}");
    assert!(u(&writer["gc_programs"]) > 0 && u(&writer["erases"]) > 0, "{writer}");
    assert_eq!(u(&writer["by_source"][0]), u(&writer["programs"]) - u(&writer["gc_programs"]));
    // The seq-fill's blocks are nobody's: GC of them counts for no flow.
    assert!(u(&rest["gc_programs"]) > 0, "{rest}");
    // The text table shows each flow's flash work and the rest.
    assert!(text.contains("flash:") && text.contains("GC progs"), "{text}");
    assert!(text.contains("no flow's"), "{text}");
}

#[test]
fn flows_confined_to_disjoint_channels_cause_only_their_own_flash_work() {
    let dir = tempfile::tempdir().unwrap();
    let (_, r) = run(dir.path(), HALVES, "4");
    let flows = r["flows"].as_array().expect("flows");
    let (reader, writer) = (&flows[0]["flash"], &flows[1]["flash"]);
    assert_eq!(u(&reader["reads"]), 20000 + u(&reader["by_source"][1]), "{reader}");
    assert_eq!(u(&reader["programs"]) + u(&reader["erases"]) + u(&reader["gc_reads"]), 0, "{reader}");
    assert!(u(&writer["gc_programs"]) > 0, "the writer's GC moves are its own: {writer}");
    assert_eq!(u(&writer["by_source"][0]), u(&writer["programs"]) - u(&writer["gc_programs"]));
    // Everything programmed or erased happened on channel 1's dies (ways x dies per channel
    // come first in die order), so what the writer caused stays in its half.
    let dies_per_channel = r["flash"]["die_programs"].as_array().unwrap().len() / 2;
    let on = |key: &str, ch: usize| -> u64 {
        r["flash"][key].as_array().unwrap()[ch * dies_per_channel..(ch + 1) * dies_per_channel]
            .iter()
            .map(u)
            .sum()
    };
    assert_eq!(on("die_programs", 0), 0, "no program on the reader's channel");
    assert_eq!(on("die_erases", 0), 0, "no erase on the reader's channel");
    assert_eq!(on("die_programs", 1), u(&writer["programs"]) + u(&r["flows_unattributed"]["programs"]));
}

#[test]
fn per_flow_flash_work_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let (_, a) = run(dir.path(), TWO, "7");
    let (_, b) = run(dir.path(), TWO, "7");
    let flash = |r: &Value| {
        let flows: Vec<Value> = r["flows"].as_array().unwrap().iter().map(|f| f["flash"].clone()).collect();
        (flows, r["flows_unattributed"].clone())
    };
    assert!(a["flows"][1]["flash"]["programs"].as_u64().is_some());
    assert_eq!(flash(&a), flash(&b));
    assert_eq!(a["flows"], b["flows"]);
    // `ssdlab compare` gives each flow's flash work a row.
    let (pa, pb) = (dir.path().join("r7.json"), dir.path().join("r7b.json"));
    std::fs::write(&pb, serde_json::to_string(&b).unwrap()).unwrap();
    let out = ok(&["compare", pa.to_str().unwrap(), pb.to_str().unwrap()]);
    let gc = u(&a["flows"][1]["flash"]["gc_programs"]);
    let commas = |n: u64| {
        let d = n.to_string();
        let mut s = String::new();
        for (i, c) in d.chars().enumerate() {
            if i > 0 && (d.len() - i).is_multiple_of(3) {
                s.push(',');
            }
            s.push(c);
        }
        s
    };
    let row =
        out.lines().find(|l| l.starts_with("flow writer GC programs")).unwrap_or_else(|| panic!("{out}"));
    assert!(row.contains(&commas(gc)) && row.ends_with("(+0.0%)"), "{gc}: {row}");
    for row in ["flow reader flash reads", "flow writer flash programs", "flow writer erases"] {
        assert!(out.lines().any(|l| l.starts_with(row)), "{row}: {out}");
    }
}

#[test]
fn a_single_flow_report_has_no_flash_per_flow() {
    let dir = tempfile::tempdir().unwrap();
    let one = "[w]\nrw=randwrite\nbs=4k\niodepth=8\nnumber_ios=5000\nnumjobs=2\n";
    let (text, r) = run(dir.path(), one, "1");
    let flows = r["flows"].as_array().expect("flows");
    assert_eq!(flows.len(), 1);
    assert!(flows[0].get("flash").is_none(), "{}", flows[0]);
    assert!(r.get("flows_unattributed").is_none());
    assert!(!text.contains("no flow's"), "{text}");
}
