//! [`JobSpec::validate`]: one-line errors naming the job and option.

use super::*;

fn check(options: &[&str]) -> Result<(), String> {
    job(options).validate(CAP, LBA).map_err(|e| e.to_string())
}

#[test]
fn sensible_jobs_pass() {
    check(&[]).unwrap();
    check(&[
        "rw=randrw",
        "bssplit=4k/50:1m/50",
        "size=10%",
        "offset=50%",
        "numjobs=4",
        "offset_increment=10%",
    ])
    .unwrap();
    check(&["rw=randwrite", "bs=512", "ba=512"]).unwrap();
    check(&["rw=write", "time_based", "runtime=1s"]).unwrap();
    check(&["size=2g"]).unwrap(); // clamped to the device
}

#[test]
fn errors_name_the_option() {
    for (options, expected) in [
        (&["bs=1000"][..], "job 't': bs: read block size 1000 is not a multiple of the 512-byte LBA size"),
        (
            &["rw=write", "bs=4k,1000"],
            "job 't': bs: write block size 1000 is not a multiple of the 512-byte LBA size",
        ),
        (&["rw=write", "bs=1000,4k"], ""), // reads are not issued
        (&["bs=4g"], "job 't': bs: read block size 4294967296 is 4GiB or more"),
        (
            &["bssplit=4k/50:1000/50"],
            "job 't': bssplit: read block size 1000 is not a multiple of the 512-byte LBA size",
        ),
        (&["ba=1000"], "job 't': blockalign: read alignment 1000 is not a multiple of the 512-byte LBA size"),
        (&["offset=1000"], "job 't': offset: 1000 is not a multiple of the 512-byte LBA size"),
        (
            &["offset=1g"],
            "job 't': offset: the job starts at byte 1073741824, past the end of the 1073741824-byte device",
        ),
        (
            &["offset_increment=100"],
            "job 't': offset_increment: 100 is not a multiple of the 512-byte LBA size",
        ),
        (
            &["numjobs=3", "offset_increment=50%"],
            "job 't': offset_increment: clone 2 of the job starts at byte 1073741824, past the end of the 1073741824-byte device",
        ),
        (&["size=2k"], "job 't': size: the region holds 2048 bytes, less than one 4096-byte block"),
        (
            &["offset=1020m", "bs=8m"],
            "job 't': size: the region holds 4194304 bytes, less than one 8388608-byte block",
        ),
        (
            &["rw=randread", "ba=2g"],
            "job 't': size: the region holds 1073741824 bytes, less than one 2147483648-byte block",
        ),
        (&["time_based"], "job 't': time_based: needs a runtime"),
        (&["io_size=0%"], ""), // 0 means "not set"
        (&["iodepth=65536"], "job 't': iodepth: 65536 is above 65535, the most an NVMe queue can hold"),
        (&["numjobs=4097"], "job 't': numjobs: 4097 is above the limit of 4096 (fio's)"),
    ] {
        assert_eq!(check(options).err().unwrap_or_default(), expected, "{options:?}");
    }
}

#[test]
fn io_size_rounding_to_zero_is_an_error() {
    let mut j = job(&["size=4k"]);
    j.io_size = Some(Extent::Bytes(sim::ByteSize(0)));
    assert_eq!(j.validate(CAP, LBA).unwrap_err().to_string(), "job 't': io_size: comes to 0 bytes");
}

#[test]
fn hand_built_specs_are_checked_too() {
    let mut j = JobSpec::new("h");
    j.iodepth = 0;
    assert!(j.validate(CAP, LBA).unwrap_err().to_string().contains("at least 1"));
    let mut j = JobSpec::new("h");
    j.rwmixread = 120;
    assert_eq!(j.validate(CAP, LBA).unwrap_err().to_string(), "job 'h': rwmixread: 120% is above 100%");
    let mut j = JobSpec::new("h");
    j.bs.read = sim::ByteSize(0);
    assert_eq!(
        j.validate(CAP, LBA).unwrap_err().to_string(),
        "job 'h': bs: read block size 0 must be above 0"
    );
    assert!(JobSpec::new("h").validate(0, 512).unwrap_err().to_string().contains("is empty"));
    assert!(JobSpec::new("h").validate(CAP, 0).unwrap_err().to_string().contains("is empty"));
}

#[test]
fn percentages_round_to_alignment_and_lbas() {
    // 1% of 1 GiB is 10737418.24 bytes: the offset rounds down to a 64 KiB multiple, the size
    // to an LBA multiple.
    let j = job(&["rw=randread", "bs=64k", "offset=1%", "size=1%"]);
    let s = JobStream::new(&j, 0, CAP, LBA, 0).unwrap();
    let r = s.region();
    assert_eq!(r.start, 10737418 / 65536 * 65536);
    assert_eq!(r.end - r.start, 10737418 / 512 * 512);
}

#[test]
fn streams_refuse_clones_beyond_numjobs() {
    let err = JobStream::new(&job(&["numjobs=2"]), 2, CAP, LBA, 0).unwrap_err();
    assert_eq!(err.to_string(), "job 't': numjobs: clone 2 requested of a job with numjobs=2");
}
