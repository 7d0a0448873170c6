//! Every accepted option, every ignored one, and the refusals.

use sim::{ByteSize, SimDuration};

use super::*;

fn set(j: &mut JobSpec, key: &str, value: Option<&str>) -> Result<(), String> {
    j.set(key, value).map_err(|e| e.to_string())
}

fn sizes(p: PerDir<ByteSize>) -> [u64; 3] {
    [p.read.bytes(), p.write.bytes(), p.trim.bytes()]
}

#[test]
fn rw_modes_and_aliases() {
    for (value, mode) in [
        ("read", RwMode::Read),
        ("write", RwMode::Write),
        ("randread", RwMode::RandRead),
        ("randwrite", RwMode::RandWrite),
        ("rw", RwMode::Rw),
        ("readwrite", RwMode::Rw),
        ("randrw", RwMode::RandRw),
        ("trim", RwMode::Trim),
        ("randtrim", RwMode::RandTrim),
    ] {
        assert_eq!(job(&[&format!("rw={value}")]).rw, mode);
        assert_eq!(job(&[&format!("readwrite={value}")]).rw, mode);
    }
    let mut j = JobSpec::default();
    let err = set(&mut j, "rw", Some("trimwrite")).unwrap_err();
    assert_eq!(
        err,
        "option 'rw': invalid value 'trimwrite': read, write, randread, randwrite, rw, randrw, trim or randtrim"
    );
    let err = set(&mut j, "rw", Some("randread:8")).unwrap_err();
    assert!(err.starts_with("unsupported option 'rw': the ':<n>' offset modifier"), "{err}");
}

#[test]
fn block_sizes_per_direction() {
    assert_eq!(sizes(job(&["bs=16k"]).bs), [16384; 3]);
    assert_eq!(sizes(job(&["blocksize=8k,64k"]).bs), [8192, 65536, 65536]);
    assert_eq!(sizes(job(&["bs=8k,64k,"]).bs), [8192, 65536, 4096]);
    assert_eq!(sizes(job(&["bs=,64k"]).bs), [4096, 65536, 65536]);
    assert_eq!(sizes(job(&["bs=1m"]).bs), [1 << 20; 3]);
    let j = job(&["bssplit=4k/50:64k/50,128k"]);
    assert_eq!(j.block_sizes(IoOp::Read), vec![(ByteSize::kib(4), 50), (ByteSize::kib(64), 50)]);
    assert_eq!(j.block_sizes(IoOp::Write), vec![(ByteSize::kib(128), 100)]);
    let j = job(&["bs=16k", "bssplit=,8k/10:32k/90,"]);
    assert_eq!(j.block_sizes(IoOp::Read), vec![(ByteSize::kib(16), 100)]);
    assert_eq!(j.block_sizes(IoOp::Write), vec![(ByteSize::kib(8), 10), (ByteSize::kib(32), 90)]);
    assert_eq!(j.block_sizes(IoOp::Trim), vec![(ByteSize::kib(16), 100)]);
    let j = job(&["blockalign=8k", "ba=,16k"]);
    assert_eq!(
        j.blockalign,
        PerDir { read: None, write: Some(ByteSize::kib(16)), trim: Some(ByteSize::kib(16)) }
    );
    let j = job(&["blockalign=8k"]);
    assert_eq!(j.blockalign, PerDir::splat(Some(ByteSize::kib(8))));

    let mut j = JobSpec::default();
    assert_eq!(
        set(&mut j, "bs", Some("0")).unwrap_err(),
        "option 'bs': invalid value '0': a size such as 4096, 4k, 64KiB or 1m, above 0"
    );
    assert!(set(&mut j, "bs", Some("4q")).unwrap_err().contains("invalid value '4q'"));
    assert!(set(&mut j, "bs", Some("1,2,3,4")).unwrap_err().contains("at most three"));
    assert!(set(&mut j, "bssplit", Some("4k/50:8k/40")).unwrap_err().contains("add up to 90"));
    assert!(set(&mut j, "ba", Some("-1")).unwrap_err().contains("option 'ba'"));
}

#[test]
fn counts_and_percentages() {
    let j = job(&["iodepth=32", "numjobs=4", "loops=3", "rwmixread=70"]);
    assert_eq!((j.iodepth, j.numjobs, j.loops, j.rwmixread), (32, 4, 3, 70));
    assert_eq!(job(&["rwmixwrite=30"]).rwmixread, 70);
    assert_eq!(job(&["iodepth=1k"]).iodepth, 1024);
    assert_eq!(job(&["number_ios=1000"]).number_ios, Some(1000));
    assert_eq!(job(&["number_ios=0"]).number_ios, None);
    assert_eq!(job(&["randseed=42"]).randseed, Some(42));
    let mut j = JobSpec::default();
    for (k, v) in [
        ("iodepth", "0"),
        ("numjobs", "0"),
        ("loops", "0"),
        ("iodepth", "99999999999"),
        ("rwmixread", "101"),
        ("rwmixwrite", "-1"),
        ("number_ios", "many"),
        ("randseed", "0.5"),
    ] {
        let err = set(&mut j, k, Some(v)).unwrap_err();
        assert!(err.starts_with(&format!("option '{k}': invalid value '{v}'")), "{err}");
    }
}

#[test]
fn region_options() {
    let j = job(&["size=50%", "offset=1g", "offset_increment=10%", "io_size=2g"]);
    assert_eq!(j.size, Some(Extent::Percent(50)));
    assert_eq!(j.offset, Extent::Bytes(ByteSize::gib(1)));
    assert_eq!(j.offset_increment, Extent::Percent(10));
    assert_eq!(j.io_size, Some(Extent::Bytes(ByteSize::gib(2))));
    assert_eq!(job(&["io_limit=10%"]).io_size, Some(Extent::Percent(10)));
    assert_eq!(job(&["size=0"]).size, None);
    let mut j = JobSpec::default();
    assert!(set(&mut j, "size", Some("150%")).unwrap_err().contains("percentage such as 50%"));
    assert!(set(&mut j, "offset", Some("x")).unwrap_err().starts_with("option 'offset': invalid value 'x'"));
}

#[test]
fn distributions() {
    assert_eq!(job(&["random_distribution=zipf:1.2"]).random_distribution, Distribution::Zipf(1.2));
    assert_eq!(job(&["random_distribution=random"]).random_distribution, Distribution::Uniform);
    assert_eq!(
        job(&["random_distribution=hotcold:10/90"]).random_distribution,
        Distribution::HotCold { hot_pct: 10, access_pct: 90 }
    );
    let mut j = JobSpec::default();
    let err = set(&mut j, "random_distribution", Some("normal:5")).unwrap_err();
    assert!(
        err.starts_with("option 'random_distribution': invalid value 'normal:5': 'normal' is not supported"),
        "{err}"
    );
}

#[test]
fn times_and_flags() {
    let j = job(&["runtime=10", "ramp_time=500ms", "time_based"]);
    assert_eq!(j.runtime, Some(SimDuration::from_secs(10)));
    assert_eq!(j.ramp_time, SimDuration::from_millis(500));
    assert!(j.time_based);
    assert_eq!(job(&["timeout=2m"]).runtime, Some(SimDuration::from_secs(120)));
    assert_eq!(job(&["runtime=0"]).runtime, None);
    assert!(!job(&["time_based", "time_based=0"]).time_based);
    assert!(job(&["norandommap"]).norandommap);
    assert!(!job(&["norandommap=0"]).norandommap);
    assert!(!job(&["randrepeat=0"]).randrepeat);
    assert!(!job(&["rand_repeatable=false"]).randrepeat);
    let mut j = JobSpec::default();
    assert_eq!(
        set(&mut j, "time_based", Some("maybe")).unwrap_err(),
        "option 'time_based': invalid value 'maybe': 0 or 1"
    );
    assert!(set(&mut j, "runtime", Some("10 parsecs")).unwrap_err().contains("a time such as"));
}

#[test]
fn rate_limits_per_direction() {
    let j = job(&["rate=10m", "rate_iops=1000"]);
    assert_eq!(j.rate_bytes, PerDir::splat(Some(10 << 20)));
    assert_eq!(j.rate_iops, PerDir::splat(Some(1000)));
    let j = job(&["rate=1m,500k"]);
    assert_eq!(j.rate_bytes, PerDir { read: Some(1 << 20), write: Some(500 << 10), trim: Some(500 << 10) });
    let j = job(&["rate=,500k,"]);
    assert_eq!(j.rate_bytes, PerDir { read: None, write: Some(500 << 10), trim: None });
    let j = job(&["rate_iops=500,"]);
    assert_eq!(j.rate_iops, PerDir { read: Some(500), write: None, trim: None });
    assert_eq!(job(&["rate=0"]).rate_bytes, PerDir::splat(None));
    assert!(job(&["rate_process=linear", "kb_base=1024"]) == JobSpec::new("t"));
    let mut j = JobSpec::default();
    let err = set(&mut j, "rate_process", Some("poisson")).unwrap_err();
    assert_eq!(err, "unsupported option 'rate_process': only the default ('linear') is supported");
    let err = set(&mut j, "kb_base", Some("1000")).unwrap_err();
    assert_eq!(err, "unsupported option 'kb_base': only the default ('1024') is supported");
}

#[test]
fn name_sets_the_job_name() {
    assert_eq!(job(&["name=seq-writer"]).name, "seq-writer");
}

#[test]
fn ignored_options_change_nothing() {
    for &key in IGNORED_OPTIONS {
        for value in [None, Some("libaio"), Some("1")] {
            let mut j = JobSpec::new("t");
            j.set(key, value).unwrap_or_else(|e| panic!("{key}: {e}"));
            assert_eq!(j, JobSpec::new("t"), "{key}");
        }
    }
}

#[test]
fn every_supported_option_is_handled() {
    // A sensible value for each; flags take none. Reaching `unreachable!` would panic here.
    for &key in SUPPORTED_OPTIONS {
        let value = match key {
            "rw" | "readwrite" => Some("randrw"),
            "random_distribution" => Some("zipf:1.1"),
            "bssplit" => Some("4k/100"),
            "rate_process" => Some("linear"),
            "kb_base" => Some("1024"),
            "time_based" | "norandommap" | "randrepeat" | "rand_repeatable" => None,
            "runtime" | "timeout" | "ramp_time" => Some("1s"),
            "size" | "offset" | "offset_increment" | "io_size" | "io_limit" => Some("10%"),
            "name" => Some("x"),
            "placement" => Some("group:1"),
            "channels" | "ways" | "dies" | "planes" => Some("0-1"),
            "queue_priority" => Some("urgent"),
            "zonemode" => Some("zbd"),
            "zone_reset_threshold" | "zone_reset_frequency" => Some("0.5"),
            "read_beyond_wp" | "fdp" | "end_fsync" => Some("1"),
            "dataplacement" => Some("fdp"),
            "fdp_pli" | "plids" => Some("0,2-3"),
            "fdp_pli_select" | "plid_select" => Some("random"),
            "max_open_zones" | "job_max_open_zones" => Some("4"),
            "rwmixread" | "rwmixwrite" => Some("50"),
            _ => Some("4k"),
        };
        let mut j = JobSpec::default();
        j.set(key, value).unwrap_or_else(|e| panic!("{key}: {e}"));
    }
}

#[test]
fn unknown_and_phase_options_are_rejected_by_name() {
    let mut j = JobSpec::default();
    assert_eq!(set(&mut j, "verify_backlog", Some("1")).unwrap_err(), "unsupported option 'verify_backlog'");
    assert_eq!(set(&mut j, "thinktime", None).unwrap_err(), "unsupported option 'thinktime'");
    assert_eq!(set(&mut j, "RW", Some("read")).unwrap_err(), "unsupported option 'RW'");
    for key in ["stonewall", "new_group", "wait_for"] {
        let err = set(&mut j, key, None).unwrap_err();
        assert!(err.starts_with(&format!("unsupported option '{key}': ssdlab runs all jobs")), "{err}");
    }
    assert_eq!(set(&mut j, "bs", None).unwrap_err(), "option 'bs' needs a value");
    assert_eq!(set(&mut j, "runtime", Some("  ")).unwrap_err(), "option 'runtime' needs a value");
}

#[test]
fn zone_and_placement_options_parse_as_fio_writes_them() {
    let mut j = JobSpec::default();
    for (k, v) in [
        ("zonemode", "zbd"),
        ("zonesize", "64m"),
        ("max_open_zones", "14"),
        ("zone_reset_threshold", "0.7"),
        ("zone_reset_frequency", "0.25"),
        ("fdp", "1"),
        ("fdp_pli", "0,2-4"),
        ("plid_select", "random"),
        ("end_fsync", "1"),
    ] {
        set(&mut j, k, Some(v)).unwrap();
    }
    let z = j.zbd.clone().unwrap();
    assert_eq!(
        (z.zonesize, z.max_open_zones, z.reset_threshold, z.reset_frequency),
        (Some(64 << 20), 14, Some(0.7), 0.25)
    );
    assert_eq!((j.plids.clone(), j.plid_random, j.fdp, j.end_fsync), (vec![0, 2, 3, 4], true, true, true));
    set(&mut j, "zonemode", Some("none")).unwrap();
    assert!(j.zbd.is_none());
    assert!(set(&mut j, "zonemode", Some("strided")).unwrap_err().contains("only 'zbd'"));
    assert!(set(&mut j, "zone_reset_threshold", Some("1.5")).unwrap_err().contains("from 0 to 1"));
    assert!(set(&mut j, "fdp_pli", Some("3-1")).unwrap_err().contains("placement identifiers"));
    assert!(set(&mut j, "dataplacement", Some("streams")).unwrap_err().contains("streams are not modelled"));
}
