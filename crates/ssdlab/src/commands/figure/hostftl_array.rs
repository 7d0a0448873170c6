//! `ssdlab figure hostftl-array`: the FPGA storage array with a host-side FTL (PRESETS.md,
//! "Preset hostftl-array"), every number from runs of the `hostftl-array` preset.

use anyhow::Result;
use firmware::config::{DeviceConfig, SystemConfig, WriteMode};
use host::run::RunOptions;
use report::Report;
use ssdlab::Start;

use super::FigureOpts;
use super::lab::{Lab, Verdict};

const PRESET: &str = "hostftl-array";
/// Blocks per die with `--quick`.
const QUICK_BLOCKS: u32 = 96;

fn mode(m: WriteMode) -> impl FnOnce(&mut DeviceConfig) {
    move |cfg| {
        if let SystemConfig::HostFtl(h) = &mut cfg.system {
            h.write.mode = m;
        }
    }
}

fn mb(r: &Report, op: &str) -> f64 {
    r.ops.get(op).map_or(0.0, |o| o.throughput.mb_per_s)
}

pub fn run(o: &FigureOpts) -> Result<()> {
    lab(o)?.finish()
}

/// Runs the figure's experiments into a table, each published comparison judged.
pub fn lab(o: &FigureOpts) -> Result<Lab> {
    let mut lab = Lab::new("hostftl-array", o)?;
    let opts = RunOptions::default();
    // Four threads, each writing its own region sequentially: 1 GiB each (64 MiB with --quick).
    let per_clone = lab.pick(1024, 64);
    let region = format!("{}m", per_clone);
    let seq_write = |lab: &Lab, bs: &str, ios: u64, offset: &str| {
        let n = ios.to_string();
        lab.job(
            "seq-write",
            &[
                ("rw", "write"),
                ("bs", bs),
                ("numjobs", "4"),
                ("iodepth", "8"),
                ("size", &region),
                ("offset", offset),
                ("offset_increment", &region),
                ("number_ios", &n),
            ],
        )
    };

    // 1. Sequential write, 1 MiB: super-page writes against pipelined page writes.
    let mut seq = [0.0; 2];
    for (k, m) in [WriteMode::Auto, WriteMode::Pipelined].into_iter().enumerate() {
        let rig = lab.rig(&lab.device(PRESET, QUICK_BLOCKS, mode(m))?, Start::Fresh)?;
        let r = lab.run(
            &format!("sequential write 1 MiB, {m:?}"),
            &rig,
            &[seq_write(&lab, "1m", per_clone, "0")],
            &opts,
        )?;
        lab.save(&format!("seq-write-{}", if k == 0 { "super-page" } else { "pipelined" }), &r, k == 0)?;
        seq[k] = mb(&r, "write");
    }
    lab.row(
        "seq write, super-page",
        "1 MiB, 4 threads x QD8 (MB/s)",
        format!("{:.0}", seq[0]),
        "near the 1600 MB/s bound",
        format!("{:.0}% of the bound; ssdlab's page is 16 KiB, the paper's bound uses 15.6 KiB (bound here {:.0})", seq[0] / 1600.0 * 100.0, 64.0 * 16384.0 / 600e-6 / 1e6),
    )
    .judge(Verdict::within(seq[0], 1600.0 * 0.8, 1600.0 * 1.1));
    lab.row(
        "seq write, pipelined",
        "1 MiB, 4 threads x QD8 (MB/s)",
        format!("{:.0}", seq[1]),
        "drops without super-pages",
        format!(
            "{:.0}% of super-page: each page's program holds one of 32 command slots for tPROG",
            seq[1] / seq[0].max(1.0) * 100.0
        ),
    )
    .judge(Verdict::shape(seq[1] < 0.9 * seq[0]));

    // 2. Super-page against pipelined across request sizes.
    let sizes = ["4k", "16k", "64k", "128k", "256k", "1m"];
    let mut by_size = vec![[0.0; 2]; sizes.len()];
    for (k, m) in [WriteMode::Auto, WriteMode::Pipelined].into_iter().enumerate() {
        let rig = lab.rig(&lab.device(PRESET, QUICK_BLOCKS, mode(m))?, Start::Fresh)?;
        for (i, bs) in sizes.iter().enumerate() {
            let bytes: u64 =
                bs.trim_end_matches(['k', 'm']).parse::<u64>()? << if bs.ends_with('m') { 20 } else { 10 };
            let ios = (lab.pick(256u64, 16) << 20) / bytes;
            let offset = format!("{}m", i as u64 * 4 * per_clone);
            let r = lab.run(
                &format!("sequential write {bs}, {m:?}"),
                &rig,
                &[seq_write(&lab, bs, ios, &offset)],
                &opts,
            )?;
            by_size[i][k] = mb(&r, "write");
        }
    }
    for (i, bs) in sizes.iter().enumerate() {
        lab.row(
            "super-page vs pipelined by size",
            &format!("seq write {bs} (MB/s: super-page / pipelined)"),
            format!("{:.0} / {:.0}", by_size[i][0], by_size[i][1]),
            "super-pages win for large writes",
            if by_size[i][0] > 1.1 * by_size[i][1] {
                "super-page faster".into()
            } else {
                "same: too small to fill a super-page (128 KiB), so both go pipelined".into()
            },
        );
    }
    // The published claim is about large writes: super-pages ahead at 1 MiB, not behind at 4 KiB.
    if let (Some(small), Some(large)) = (by_size.first(), by_size.last()) {
        lab.row(
            "super-page vs pipelined by size",
            "super-page gain at 1 MiB over its gain at 4 KiB",
            format!("x{:.2} / x{:.2}", large[0] / large[1].max(1.0), small[0] / small[1].max(1.0)),
            "super-pages win for large writes",
            "the rows above, as one shape".into(),
        )
        .judge(Verdict::shape(large[0] > 1.1 * large[1] && small[0] > 0.9 * small[1]));
    }

    // 3. Reads by block size, over data written first.
    let rig = lab.rig(&lab.device(PRESET, QUICK_BLOCKS, |_| {})?, Start::Fresh)?;
    lab.run("writing the read region", &rig, &[seq_write(&lab, "1m", per_clone, "0")], &opts)?;
    let mut reads = Vec::new();
    for bs in ["4k", "16k", "64k", "256k", "1m"] {
        let bytes: u64 =
            bs.trim_end_matches(['k', 'm']).parse::<u64>()? << if bs.ends_with('m') { 20 } else { 10 };
        let n = ((lab.pick(512u64, 32) << 20) / bytes).to_string();
        let job = lab.job(
            "seq-read",
            &[
                ("rw", "read"),
                ("bs", bs),
                ("numjobs", "4"),
                ("iodepth", "8"),
                ("size", &region),
                ("offset_increment", &region),
                ("number_ios", &n),
            ],
        );
        let r = lab.run(&format!("sequential read {bs}"), &rig, &[job], &opts)?;
        if bs == "1m" {
            lab.save("seq-read-1m", &r, true)?;
        }
        reads.push((bs, mb(&r, "read")));
    }
    for (bs, v) in &reads {
        let big = *bs == "1m";
        let row = lab.row(
            "read bandwidth by block size",
            &format!("seq read {bs}, 4 threads x QD8 (MB/s)"),
            format!("{v:.0}"),
            if big { "~2800 measured; DMA bound 3450" } else { "lower at small blocks" },
            if big {
                format!("{:.0}% of the DMA bound (256 bit x 120 MHz x 0.9)", v / 3456.0 * 100.0)
            } else {
                format!("{:.0}% of the 1 MiB figure", v / reads.last().map_or(1.0, |r| r.1.max(1.0)) * 100.0)
            },
        );
        // "Lower at small blocks": 4 and 16 KiB below 90% of 1 MiB's (64 and 256 KiB shown only).
        let big_mb = reads.last().map_or(1.0, |r| r.1.max(1.0));
        if big {
            row.judge(Verdict::near(*v, 2800.0, 2800.0));
        } else if matches!(*bs, "4k" | "16k") {
            row.judge(Verdict::shape(*v < 0.9 * big_mb));
        }
    }

    // 4. 4 KiB random IOPS at QD16 x 4 threads, by read share.
    for read_pct in [100, 70, 50, 30, 0] {
        let n = lab.pick(50_000u64, 2_000).to_string();
        let p = read_pct.to_string();
        let job = lab.job(
            "random-4k",
            &[
                ("rw", "randrw"),
                ("rwmixread", &p),
                ("bs", "4k"),
                ("numjobs", "4"),
                ("iodepth", "16"),
                ("size", &format!("{}m", 4 * per_clone)),
                ("number_ios", &n),
            ],
        );
        let r = lab.run(&format!("4 KiB random, {read_pct}% reads"), &rig, &[job], &opts)?;
        lab.row(
            "4 KiB random IOPS, QD16 x 4",
            &format!("{read_pct}% reads (IOPS)"),
            format!("{:.0}", r.total.iops),
            "75k-100k by mix",
            format!(
                "host CPU {:.0}% busy; mean latency {:.0} us",
                r.host_stack.as_ref().map_or(0.0, |h| h.cpu_busy * 100.0),
                mean_latency(&r)
            ),
        )
        .judge(Verdict::near(r.total.iops, 75_000.0, 100_000.0));
    }

    // 5. Small reads by queue depth.
    let big = reads.last().map_or(1.0, |r| r.1.max(1.0));
    let mut by_qd = Vec::new();
    for qd in [1, 4, 16, 32, 64] {
        let n = lab.pick(20_000u64, 1_000).to_string();
        let q = qd.to_string();
        let job = lab.job(
            "qd-read",
            &[
                ("rw", "randread"),
                ("bs", "4k"),
                ("iodepth", &q),
                ("size", &format!("{}m", 4 * per_clone)),
                ("number_ios", &n),
            ],
        );
        let r = lab.run(&format!("4 KiB random read at QD{qd}"), &rig, &[job], &opts)?;
        by_qd.push((qd, mb(&r, "read"), r.total.iops));
    }
    let deepest = by_qd.last().map_or(1.0, |q| q.1.max(1e-9));
    for &(qd, v, iops) in &by_qd {
        let row = lab.row(
            "small blocks by queue depth",
            &format!("4 KiB random read QD{qd}, 1 thread (MB/s)"),
            format!("{v:.0}"),
            "much slower at QD < 32",
            format!(
                "{:.0}% of 1 MiB sequential reads, {:.0}% of QD64; {iops:.0} IOPS",
                v / big * 100.0,
                v / deepest * 100.0
            ),
        );
        // "Much slower": at most half of what the deepest queue reaches.
        if qd < 32 {
            row.judge(Verdict::shape(v < 0.5 * deepest));
        }
    }

    // 6. Write allocation directed by the host, seen in the per-die program counts.
    let rig = lab.rig(&lab.device(PRESET, QUICK_BLOCKS, |_| {})?, Start::Fresh)?;
    let n = lab.pick(512u64, 64).to_string();
    let to_die = lab.job(
        "to-die-5",
        &[
            ("rw", "write"),
            ("bs", "128k"),
            ("iodepth", "4"),
            ("size", "1g"),
            ("number_ios", &n),
            ("placement", "die:5"),
        ],
    );
    lab.run("host-directed writes to die 5", &rig, &[to_die], &opts)?;
    lab.settle(&rig)?;
    let dies: Vec<u64> = rig.system().totals().fil.die_ops.iter().map(|o| o[1]).collect();
    let on5 = dies.get(5).copied().unwrap_or(0) as f64 / dies.iter().sum::<u64>().max(1) as f64;
    let to_group = lab.job(
        "to-group-2",
        &[
            ("rw", "write"),
            ("bs", "128k"),
            ("iodepth", "4"),
            ("size", "1g"),
            ("offset", "2g"),
            ("number_ios", &n),
            ("placement", "group:2"),
        ],
    );
    let r2 = lab.run("host-directed writes to group 2", &rig, &[to_group], &opts)?;
    lab.settle(&rig)?;
    lab.save("placement", &r2, false)?;
    let after: Vec<u64> = rig.system().totals().fil.die_ops.iter().map(|o| o[1]).collect();
    let delta: Vec<u64> = after.iter().zip(&dies).map(|(a, b)| a - b).collect();
    // Group 2 is channels 16-23: dies 32-47.
    let in_group = delta[32..48].iter().sum::<u64>() as f64 / delta.iter().sum::<u64>().max(1) as f64;
    lab.row(
        "host-directed allocation",
        "die:5 writes landing on die 5",
        format!("{:.1}%", on5 * 100.0),
        "where asked",
        "per-die program counts of the report".into(),
    )
    .judge(Verdict::shape(on5 > 0.99));
    lab.row(
        "host-directed allocation",
        "group:2 writes landing in group 2",
        format!("{:.1}%", in_group * 100.0),
        "where asked",
        "dies 32-47 (channels 16-23)".into(),
    )
    .judge(Verdict::shape(in_group > 0.99));
    Ok(lab)
}

fn mean_latency(r: &Report) -> f64 {
    let (n, sum) = r.ops.values().fold((0u64, 0.0), |(n, s), o| {
        (n + o.throughput.count, s + o.latency_ns.mean * o.throughput.count as f64)
    });
    sum / n.max(1) as f64 / 1e3
}
