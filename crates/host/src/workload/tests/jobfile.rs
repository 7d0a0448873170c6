//! Job files end to end: structure, comments, line endings, and one-line errors with line
//! numbers.

use sim::{ByteSize, SimDuration};

use super::*;

fn parse(text: &str) -> Result<Vec<JobSpec>, String> {
    parse_job_file(text, "job.fio").map_err(|e| e.to_string())
}

const EXAMPLE: &str = "\
; a typical job file
[global]
ioengine=libaio
direct=1
filename=/dev/nvme0n1
rw=randrw          ; trailing comment
rwmixread=70       # another one
bs=4k
iodepth=32
runtime=30
time_based
group_reporting

[hot]
random_distribution=zipf:1.2
numjobs=4

# a second global changes only what follows
[global]
bs=128k

[seq]
rw=write
size=50%
offset=50%
";

#[test]
fn globals_apply_to_the_jobs_after_them() {
    let jobs = parse(EXAMPLE).unwrap();
    assert_eq!(jobs.len(), 2);
    let (hot, seq) = (&jobs[0], &jobs[1]);
    assert_eq!(hot.name, "hot");
    assert_eq!((hot.rw, hot.rwmixread, hot.iodepth, hot.numjobs), (RwMode::RandRw, 70, 32, 4));
    assert_eq!(hot.bs, PerDir::splat(ByteSize::kib(4)));
    assert_eq!(hot.random_distribution, Distribution::Zipf(1.2));
    assert_eq!(hot.runtime, Some(SimDuration::from_secs(30)));
    assert!(hot.time_based);
    assert_eq!(seq.name, "seq");
    assert_eq!((seq.rw, seq.numjobs, seq.iodepth), (RwMode::Write, 1, 32));
    assert_eq!(seq.bs, PerDir::splat(ByteSize::kib(128)));
    assert_eq!((seq.size, seq.offset), (Some(Extent::Percent(50)), Extent::Percent(50)));
    assert_eq!(seq.random_distribution, Distribution::Uniform);
}

#[test]
fn crlf_bom_and_spacing_are_accepted() {
    let unix = parse(EXAMPLE).unwrap();
    let dos = parse(&EXAMPLE.replace('\n', "\r\n")).unwrap();
    assert_eq!(unix, dos);
    let bom = parse(&format!("\u{feff}{EXAMPLE}")).unwrap();
    assert_eq!(unix, bom);
    let spaced = parse("[ a job ]\n  bs = 8k  \n\trw\t=\twrite\n").unwrap();
    assert_eq!(spaced[0].name, "a job");
    assert_eq!((spaced[0].bs.write, spaced[0].rw), (ByteSize::kib(8), RwMode::Write));
}

#[test]
fn comments_are_only_comments_after_white_space() {
    let jobs = parse("[j]\n;bs=8k\n#bs=8k\n   ; indented\nname=a;b\n").unwrap();
    assert_eq!(jobs[0].bs.read, ByteSize::kib(4));
    assert_eq!(jobs[0].name, "a;b");
}

#[test]
fn duplicate_names_and_empty_sections_make_jobs() {
    let jobs = parse("[a]\n[a]\n[b]\n").unwrap();
    assert_eq!(jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>(), ["a", "a", "b"]);
    assert_eq!(jobs[2], JobSpec::new("b"));
}

#[test]
fn errors_name_the_file_line_and_option() {
    for (text, expected) in [
        ("[j]\nrw=read\n\n\n\n\nverify_backlog=16\n", "job.fio:7: unsupported option 'verify_backlog'"),
        (
            "[j]\nbs=4q\n",
            "job.fio:2: option 'bs': invalid value '4q': a size such as 4096, 4k, 64KiB or 1m, above 0",
        ),
        ("[j]\nbs\n", "job.fio:2: option 'bs' needs a value"),
        ("[j]\nbs=\n", "job.fio:2: option 'bs' needs a value"),
        ("rw=read\n[j]\n", "job.fio:1: option 'rw' is outside any [section]"),
        ("; c\ntime_based\n", "job.fio:2: option 'time_based' is outside any [section]"),
        ("[j\nrw=read\n", "job.fio:1: malformed section header '[j'"),
        ("[]\n", "job.fio:1: malformed section header '[]'"),
        ("[a]b]\n", "job.fio:1: malformed section header '[a]b]'"),
        (
            "[j]\n=4k\n",
            "job.fio:2: malformed line '=4k': expected 'key=value', 'key', '[section]' or a comment",
        ),
        (
            "[j]\nblock size=4k\n",
            "job.fio:2: malformed line 'block size=4k': expected 'key=value', 'key', '[section]' or a comment",
        ),
        (
            "[j]\ninclude other.fio\n",
            "job.fio:2: 'include' is not supported: put the included options in this file",
        ),
        (
            "[j]\nfilename=${DEV}\n",
            "job.fio:2: '$' expansion is not supported (found in 'filename=${DEV}'): write the value out",
        ),
        (
            "[j]\nsize=8*$mb_memory\n",
            "job.fio:2: '$' expansion is not supported (found in 'size=8*$mb_memory'): write the value out",
        ),
        (
            "[a]\n[b]\nstonewall\n",
            "job.fio:3: unsupported option 'stonewall': ssdlab runs all jobs of a file concurrently, with no phases; split the file instead",
        ),
        (
            "[j]\r\nrw=sideways\r\n",
            "job.fio:2: option 'rw': invalid value 'sideways': read, write, randread, randwrite, rw, randrw, trim or randtrim",
        ),
        ("", "job.fio: no jobs defined (a job file needs a [section] other than [global])"),
        (
            "; only\n# comments\n\n",
            "job.fio: no jobs defined (a job file needs a [section] other than [global])",
        ),
        (
            "[global]\nrw=write\n",
            "job.fio: no jobs defined (a job file needs a [section] other than [global])",
        ),
    ] {
        assert_eq!(parse(text).unwrap_err(), expected, "{text:?}");
    }
}

#[test]
fn the_error_value_carries_the_line() {
    let err = parse_job_file("[j]\n\nfoo=1\n", "x.fio").unwrap_err();
    assert_eq!(
        err,
        JobFileError::Line {
            file: "x.fio".into(),
            line: 3,
            error: LineError::Option(JobError::Unsupported("foo".into())),
        }
    );
}

#[test]
fn parsed_jobs_validate_and_stream() {
    let jobs = parse(EXAMPLE).unwrap();
    let instances = instantiate(&jobs, CAP, LBA, 1).unwrap();
    assert_eq!(instances.len(), 5);
    assert_eq!(
        instances.iter().map(|i| (i.job, i.clone)).collect::<Vec<_>>(),
        [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)]
    );
    let mut seq = instances[4].stream.clone();
    assert_eq!(seq.region(), CAP / 2..CAP);
    let first = seq.next().unwrap();
    assert_eq!(first, IoRequest { op: IoOp::Write, offset: CAP / 2, len: 128 << 10 });
}
