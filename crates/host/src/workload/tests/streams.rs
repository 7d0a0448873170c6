//! Specific stream behaviour: sequential wrap-around, budgets, the random map, clones, seeds.

use std::collections::HashSet;

use super::*;

fn all(spec: &JobSpec, clone: u32, seed: u64) -> Vec<IoRequest> {
    take(spec, clone, seed, usize::MAX)
}

#[test]
fn sequential_jobs_cover_the_region_once_then_end() {
    let ios = all(&job(&["rw=write", "bs=64k", "offset=1m", "size=256k"]), 0, 0);
    let offsets: Vec<u64> = ios.iter().map(|r| r.offset).collect();
    assert_eq!(offsets, [1 << 20, (1 << 20) + (64 << 10), (1 << 20) + (128 << 10), (1 << 20) + (192 << 10)]);
    assert!(ios.iter().all(|r| r.op == IoOp::Write && r.len == 64 << 10));
}

#[test]
fn time_based_sequential_jobs_wrap_around() {
    let spec = job(&["rw=read", "bs=64k", "size=256k", "time_based", "runtime=1"]);
    let ios = take(&spec, 0, 0, 10);
    let offsets: Vec<u64> = ios.iter().map(|r| r.offset >> 16).collect();
    assert_eq!(offsets, [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]);
}

#[test]
fn sequential_wraps_when_the_next_block_does_not_fit() {
    let spec = job(&["rw=write", "bssplit=64k/50:128k/50", "size=256k", "time_based", "runtime=1"]);
    for r in take(&spec, 0, 3, 1000) {
        assert!(r.offset + r.len as u64 <= 256 << 10, "{r:?}");
    }
}

#[test]
fn mixed_sequential_directions_keep_their_own_positions() {
    let spec = job(&["rw=rw", "bs=4k", "time_based", "runtime=1"]);
    let ios = take(&spec, 0, 9, 1000);
    for op in [IoOp::Read, IoOp::Write] {
        let offsets: Vec<u64> = ios.iter().filter(|r| r.op == op).map(|r| r.offset).collect();
        assert!(offsets.len() > 400);
        assert!(offsets.iter().enumerate().all(|(i, &o)| o == i as u64 * 4096), "{op:?}");
    }
}

#[test]
fn budgets_end_the_stream() {
    assert_eq!(all(&job(&["rw=randread", "number_ios=100"]), 0, 0).len(), 100);
    assert_eq!(all(&job(&["rw=randread", "size=1m", "io_size=64k"]), 0, 0).len(), 16);
    assert_eq!(all(&job(&["rw=read", "size=1m", "loops=3"]), 0, 0).len(), 768);
    assert_eq!(all(&job(&["rw=read", "size=1m", "io_size=50%"]), 0, 0).len(), 128);
    assert_eq!(
        all(&job(&["rw=read", "size=1m", "number_ios=10", "time_based", "runtime=1"]), 0, 0).len(),
        10
    );
    let mut s = JobStream::new(&job(&["rw=randwrite", "size=1m", "number_ios=5"]), 0, CAP, LBA, 0).unwrap();
    while s.next().is_some() {}
    assert_eq!((s.issued(), s.bytes_issued()), (5, 5 * 4096));
    assert_eq!(s.next(), None);
    // The byte budget counts whole I/Os: the last one may pass it.
    let ios = all(&job(&["rw=write", "bssplit=4k/50:64k/50", "size=1m"]), 0, 5);
    let total: u64 = ios.iter().map(|r| r.len as u64).sum();
    assert!(total >= 1 << 20 && total - (ios.last().unwrap().len as u64) < 1 << 20);
}

#[test]
fn the_random_map_touches_every_block_once_per_pass() {
    let spec = job(&["rw=randwrite", "bs=4k", "size=1m"]);
    let ios = all(&spec, 0, 7);
    assert_eq!(ios.len(), 256);
    let blocks: HashSet<u64> = ios.iter().map(|r| r.offset / 4096).collect();
    assert_eq!(blocks.len(), 256);
    assert!(ios.windows(2).any(|w| w[1].offset != w[0].offset + 4096), "not random");
    // Later passes are new permutations, each complete.
    let timed = job(&["rw=randrw", "bs=4k", "size=1m", "time_based", "runtime=1"]);
    let ios = take(&timed, 0, 7, 256 * 3);
    let passes: Vec<Vec<u64>> = ios.chunks(256).map(|c| c.iter().map(|r| r.offset).collect()).collect();
    for p in &passes {
        assert_eq!(p.iter().collect::<HashSet<_>>().len(), 256);
    }
    assert_ne!(passes[0], passes[1]);
}

#[test]
fn norandommap_and_mixed_sizes_draw_with_replacement() {
    for options in
        [&["rw=randread", "size=1m", "norandommap"][..], &["rw=randread", "size=1m", "bs=8k", "ba=4k"]]
    {
        let ios = all(&job(options), 0, 7);
        let distinct: HashSet<u64> = ios.iter().map(|r| r.offset).collect();
        assert!(distinct.len() < ios.len(), "{options:?}: no repeats in {} draws", ios.len());
    }
}

#[test]
fn clones_get_their_slices_and_their_own_streams() {
    let spec =
        job(&["rw=randread", "numjobs=4", "size=1m", "offset=1m", "offset_increment=2m", "norandommap"]);
    let streams: Vec<Vec<IoRequest>> = (0..4).map(|c| all(&spec, c, 1)).collect();
    for (c, ios) in streams.iter().enumerate() {
        let start = (1 << 20) + c as u64 * (2 << 20);
        assert!(
            ios.iter().all(|r| r.offset >= start && r.offset + r.len as u64 <= start + (1 << 20)),
            "clone {c}"
        );
    }
    let relative = |c: usize| -> Vec<u64> { streams[c].iter().map(|r| r.offset % (2 << 20)).collect() };
    assert_ne!(relative(0), relative(1));
}

#[test]
fn seeds_decide_the_stream() {
    let spec = job(&[
        "rw=randrw",
        "bssplit=4k/50:16k/50",
        "random_distribution=zipf:0.9",
        "number_ios=500",
        "numjobs=2",
    ]);
    assert_eq!(all(&spec, 0, 1), all(&spec, 0, 1));
    assert_ne!(all(&spec, 0, 1), all(&spec, 0, 2));
    assert_ne!(all(&spec, 0, 1), all(&spec, 1, 1));
    // randseed replaces the run seed.
    let fixed = job(&["rw=randread", "randseed=99", "number_ios=100", "numjobs=2"]);
    assert_eq!(all(&fixed, 0, 1), all(&fixed, 0, 2));
    assert_ne!(all(&fixed, 0, 1), all(&fixed, 1, 1));
}

#[test]
fn instantiate_gives_identical_jobs_different_streams() {
    let spec = job(&["rw=randread", "number_ios=50", "numjobs=2"]);
    let jobs = [spec.clone(), spec];
    let a = instantiate(&jobs, CAP, LBA, 5).unwrap();
    let b = instantiate(&jobs, CAP, LBA, 5).unwrap();
    let drain = |s: &JobStream| -> Vec<IoRequest> {
        let mut s = s.clone();
        std::iter::from_fn(|| s.next()).collect()
    };
    let streams: Vec<Vec<IoRequest>> = a.iter().map(|i| drain(&i.stream)).collect();
    assert_eq!(streams, b.iter().map(|i| drain(&i.stream)).collect::<Vec<_>>());
    let distinct: HashSet<&Vec<IoRequest>> = streams.iter().collect();
    assert_eq!(distinct.len(), 4);
    assert_eq!(a[3].stream.job_index(), 1);
    assert_eq!(a[3].stream.spec().name, "t");
    assert_ne!(job_seed(5, 0), job_seed(5, 1));
    let bad = [job(&["bs=1000"])];
    assert!(instantiate(&bad, CAP, LBA, 5).is_err());
    let crowd = [job(&["numjobs=4000"]), job(&["numjobs=96"])];
    assert_eq!(instantiate(&crowd, CAP, LBA, 5).unwrap().len(), 4096);
    let too_many = [job(&["numjobs=4000"]), job(&["numjobs=97"])];
    let err = instantiate(&too_many, CAP, LBA, 5).unwrap_err().to_string();
    assert_eq!(err, "job 't': numjobs: the jobs ask for more than 4096 clones in all (fio's limit)");
}

#[test]
fn trims_use_the_trim_block_size() {
    let ios = all(&job(&["rw=randtrim", "bs=4k,4k,64k", "size=1m"]), 0, 0);
    assert_eq!(ios.len(), 16);
    assert!(ios.iter().all(|r| r.op == IoOp::Trim && r.len == 64 << 10 && r.offset % (64 << 10) == 0));
    let ios = all(&job(&["rw=trim", "size=16k"]), 0, 0);
    assert_eq!(ios.iter().map(|r| r.offset).collect::<Vec<_>>(), [0, 4096, 8192, 12288]);
}

#[test]
fn serde_round_trips_a_job() {
    let spec = job(&[
        "rw=randrw",
        "bssplit=4k/50:64k/50,16k",
        "ba=4k",
        "size=50%",
        "offset=1g",
        "random_distribution=zoned:60/10:40/90",
        "runtime=90s",
        "ramp_time=250ms",
        "time_based",
        "rate=,10m",
        "rate_iops=1000",
        "randseed=3",
    ]);
    let text = toml::to_string(&spec).unwrap();
    assert!(text.contains("random_distribution = \"zoned:60/10:40/90\""), "{text}");
    let back: JobSpec = toml::from_str(&text).unwrap();
    assert_eq!(back, spec);
    let partial: JobSpec =
        toml::from_str("rw = \"randwrite\"\nbs = { read = \"4KiB\", write = \"16KiB\", trim = \"4KiB\" }")
            .unwrap();
    assert_eq!((partial.rw, partial.bs.write.bytes(), partial.iodepth), (RwMode::RandWrite, 16384, 1));
    assert!(toml::from_str::<JobSpec>("verify = 1").unwrap_err().to_string().contains("unknown field"));
}
