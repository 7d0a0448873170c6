//! [`JobSpec::set`]: one fio option by name, the way a job file line or a command-line flag
//! gives it. Options that change the I/O stream or its pacing are applied; options that only
//! concern the host process, its buffers or its reporting are accepted and ignored
//! ([`IGNORED_OPTIONS`]); everything else is rejected by name.

use sim::ByteSize;

use super::bssplit::BsSplit;
use super::error::JobError;
use super::extent::Extent;
use super::request::PerDir;
use super::spec::{DEFAULT_BS, JobSpec, RwMode};
use super::values::{
    COUNT_EXPECTED, SIZE_EXPECTED, TIME_EXPECTED, parse_bool, parse_count, parse_percent, parse_size,
    parse_time, split_per_dir,
};

/// fio options accepted and ignored because they cannot change the simulated I/O stream:
/// the I/O engine and file handle (ssdlab drives its one namespace through NVMe queues, with no
/// host page cache, so `direct` and `buffered` make no difference), buffer contents, host
/// threads and CPUs, and what fio logs or prints. `random_generator` is ignored too: ssdlab
/// always draws from its own seeded generator.
pub const IGNORED_OPTIONS: &[&str] = &[
    "allrandrepeat",
    "buffer_compress_chunk",
    "buffer_compress_percentage",
    "buffer_pattern",
    "buffered",
    "clat_percentiles",
    "clocksource",
    "cpumask",
    "cpus_allowed",
    "cpus_allowed_policy",
    "dedupe_percentage",
    "description",
    "direct",
    "disable_bw_measurement",
    "disable_clat",
    "disable_lat",
    "disable_slat",
    "fadvise_hint",
    "filename",
    "group_reporting",
    "gtod_reduce",
    "invalidate",
    "ioengine",
    "iomem",
    "iomem_align",
    "lat_percentiles",
    "log_avg_msec",
    "log_hist_msec",
    "mem",
    "percentile_list",
    "per_job_logs",
    "random_generator",
    "refill_buffers",
    "scramble_buffers",
    "thread",
    "unified_rw_reporting",
    "write_bw_log",
    "write_hist_log",
    "write_iops_log",
    "write_lat_log",
    "zero_buffers",
];

const PHASES: &str = "ssdlab runs all jobs of a file concurrently, with no phases; split the file instead";

fn bad(option: &str, value: &str, expected: impl Into<String>) -> JobError {
    JobError::BadValue { option: option.to_string(), value: value.to_string(), expected: expected.into() }
}

/// Parses each direction's element of a comma list with `parse`, `None` where it was left empty.
fn per_dir<T>(
    key: &str,
    value: &str,
    mut parse: impl FnMut(&str) -> Result<T, String>,
) -> Result<PerDir<Option<T>>, JobError> {
    let parts = split_per_dir(value)
        .ok_or_else(|| bad(key, value, "at most three comma-separated values (read,write,trim)"))?;
    let mut one = |part: Option<&str>| part.map(&mut parse).transpose().map_err(|e| bad(key, value, e));
    Ok(PerDir { read: one(parts.read)?, write: one(parts.write)?, trim: one(parts.trim)? })
}

fn positive_size(s: &str) -> Result<u64, String> {
    parse_size(s).filter(|&b| b > 0).ok_or_else(|| format!("{SIZE_EXPECTED}, above 0"))
}

fn parse_rw(key: &str, value: &str) -> Result<RwMode, JobError> {
    if value.contains(':') {
        return Err(JobError::NotImplemented {
            option: key.to_string(),
            reason: format!("the ':<n>' offset modifier in '{value}' is not supported"),
        });
    }
    Ok(match value {
        "read" => RwMode::Read,
        "write" => RwMode::Write,
        "randread" => RwMode::RandRead,
        "randwrite" => RwMode::RandWrite,
        "rw" | "readwrite" => RwMode::Rw,
        "randrw" => RwMode::RandRw,
        "trim" => RwMode::Trim,
        "randtrim" => RwMode::RandTrim,
        _ => return Err(bad(key, value, "read, write, randread, randwrite, rw, randrw, trim or randtrim")),
    })
}

impl JobSpec {
    /// Applies fio option `key` with `value` (`None` for a bare `key`, as in `time_based`).
    ///
    /// Used by the job-file parser for each `key=value` line and by the command line for each
    /// `--key=value` flag, so both accept exactly the same options and spellings. Values are
    /// checked on their own here (a size parses, a percentage is at most 100); whether the job
    /// fits the device is [`JobSpec::validate`]'s business.
    pub fn set(&mut self, key: &str, value: Option<&str>) -> Result<(), JobError> {
        let key = key.trim();
        let value = value.map(str::trim);
        let flag = |v: Option<&str>| match v {
            None => Ok(true),
            Some(v) => parse_bool(v).ok_or_else(|| bad(key, v, "0 or 1")),
        };
        if IGNORED_OPTIONS.contains(&key) {
            return Ok(());
        }
        match key {
            "time_based" => return flag(value).map(|b| self.time_based = b),
            "norandommap" => return flag(value).map(|b| self.norandommap = b),
            "randrepeat" | "rand_repeatable" => return flag(value).map(|b| self.randrepeat = b),
            "stonewall" | "new_group" | "wait_for" => {
                return Err(JobError::NotImplemented { option: key.to_string(), reason: PHASES.to_string() });
            }
            _ => {}
        }
        let known = SUPPORTED_OPTIONS.contains(&key);
        let v = match value {
            _ if !known => return Err(JobError::Unsupported(key.to_string())),
            Some(v) if !v.is_empty() => v,
            _ => return Err(JobError::MissingValue(key.to_string())),
        };
        let count = |min: u64| {
            parse_count(v)
                .filter(|&n| n >= min)
                .ok_or_else(|| bad(key, v, format!("{COUNT_EXPECTED}, at least {min}")))
        };
        let small = |min: u64| {
            count(min).and_then(|n| u32::try_from(n).map_err(|_| bad(key, v, "a number below 2^32")))
        };
        let percent = || parse_percent(v).ok_or_else(|| bad(key, v, "a whole percentage from 0 to 100"));
        let time = || parse_time(v).ok_or_else(|| bad(key, v, TIME_EXPECTED));
        let extent = || v.parse::<Extent>().map_err(|e| bad(key, v, format!("{e}")));
        match key {
            "name" => self.name = v.to_string(),
            "rw" | "readwrite" => self.rw = parse_rw(key, v)?,
            "bs" | "blocksize" => {
                let sizes = per_dir(key, v, positive_size)?;
                self.bs = PerDir {
                    read: ByteSize(sizes.read.unwrap_or(DEFAULT_BS.0)),
                    write: ByteSize(sizes.write.unwrap_or(DEFAULT_BS.0)),
                    trim: ByteSize(sizes.trim.unwrap_or(DEFAULT_BS.0)),
                };
            }
            "bssplit" => self.bssplit = per_dir(key, v, |s| s.parse::<BsSplit>().map_err(|e| e.to_string()))?,
            "blockalign" | "ba" => {
                let a = per_dir(key, v, positive_size)?;
                self.blockalign = PerDir {
                    read: a.read.map(ByteSize),
                    write: a.write.map(ByteSize),
                    trim: a.trim.map(ByteSize),
                };
            }
            "iodepth" => self.iodepth = small(1)?,
            "numjobs" => self.numjobs = small(1)?,
            "loops" => self.loops = small(1)?,
            "rwmixread" => self.rwmixread = percent()?,
            "rwmixwrite" => self.rwmixread = 100 - percent()?,
            "size" => self.size = Some(extent()?).filter(|e| !e.is_zero()),
            "offset" => self.offset = extent()?,
            "offset_increment" => self.offset_increment = extent()?,
            "io_size" | "io_limit" => self.io_size = Some(extent()?).filter(|e| !e.is_zero()),
            "random_distribution" => {
                self.random_distribution = v.parse().map_err(|e| bad(key, v, format!("{e}")))?;
            }
            "number_ios" => self.number_ios = Some(count(0)?).filter(|&n| n > 0),
            "runtime" | "timeout" => self.runtime = Some(time()?).filter(|t| !t.is_zero()),
            "ramp_time" => self.ramp_time = time()?,
            "rate" => {
                let r = per_dir(key, v, |s| parse_size(s).ok_or_else(|| SIZE_EXPECTED.to_string()))?;
                self.rate_bytes = PerDir {
                    read: r.read.filter(|&x| x > 0),
                    write: r.write.filter(|&x| x > 0),
                    trim: r.trim.filter(|&x| x > 0),
                };
            }
            "rate_iops" => {
                let r = per_dir(key, v, |s| parse_count(s).ok_or_else(|| COUNT_EXPECTED.to_string()))?;
                self.rate_iops = PerDir {
                    read: r.read.filter(|&x| x > 0),
                    write: r.write.filter(|&x| x > 0),
                    trim: r.trim.filter(|&x| x > 0),
                };
            }
            "randseed" => self.randseed = Some(count(0)?),
            "placement" => self.placement = Some(v.parse().map_err(|e: String| bad(key, v, e))?),
            "channels" | "ways" | "dies" | "planes" => {
                let list = Some(super::confine::parse_indices(v).map_err(|e| bad(key, v, e))?);
                match key {
                    "channels" => self.confine.channels = list,
                    "ways" => self.confine.ways = list,
                    "dies" => self.confine.dies = list,
                    _ => self.confine.planes = list,
                }
            }
            "queue_priority" => {
                self.queue_priority = Some(match v {
                    "urgent" => firmware::hil::Priority::Urgent,
                    "high" => firmware::hil::Priority::High,
                    "medium" => firmware::hil::Priority::Medium,
                    "low" => firmware::hil::Priority::Low,
                    _ => return Err(bad(key, v, "expected urgent, high, medium or low")),
                })
            }
            "zonemode" => match v {
                "none" => self.zbd = None,
                "zbd" => self.zbd = Some(self.zbd.take().unwrap_or_default()),
                "strided" => {
                    return Err(JobError::NotImplemented {
                        option: key.to_string(),
                        reason: "only 'zbd' (zones from the device) and 'none' are supported".into(),
                    });
                }
                _ => return Err(bad(key, v, "none, strided or zbd")),
            },
            "zonesize" => {
                let size = positive_size(v).map_err(|e| bad(key, v, e))?;
                self.zbd.get_or_insert_with(Default::default).zonesize = Some(size);
            }
            "max_open_zones" | "job_max_open_zones" => {
                self.zbd.get_or_insert_with(Default::default).max_open_zones = small(0)?;
            }
            "zone_reset_threshold" | "zone_reset_frequency" => {
                let f = v.parse::<f64>().ok().filter(|f| (0.0..=1.0).contains(f));
                let f = f.ok_or_else(|| bad(key, v, "a number from 0 to 1"))?;
                let z = self.zbd.get_or_insert_with(Default::default);
                match key {
                    "zone_reset_threshold" => z.reset_threshold = Some(f),
                    _ => z.reset_frequency = f,
                }
            }
            "read_beyond_wp" => {
                let b = parse_bool(v).ok_or_else(|| bad(key, v, "0 or 1"))?;
                self.zbd.get_or_insert_with(Default::default).read_beyond_wp = b;
            }
            "fdp" => self.fdp = parse_bool(v).ok_or_else(|| bad(key, v, "0 or 1"))?,
            "end_fsync" => self.end_fsync = parse_bool(v).ok_or_else(|| bad(key, v, "0 or 1"))?,
            "dataplacement" => match v {
                "none" => self.fdp = false,
                "fdp" => self.fdp = true,
                "streams" => {
                    return Err(JobError::NotImplemented {
                        option: key.to_string(),
                        reason: "NVMe streams are not modelled; use dataplacement=fdp".into(),
                    });
                }
                _ => return Err(bad(key, v, "none, fdp or streams")),
            },
            "fdp_pli" | "plids" => self.plids = parse_plids(v).map_err(|e| bad(key, v, e))?,
            "fdp_pli_select" | "plid_select" => match v {
                "roundrobin" => self.plid_random = false,
                "random" => self.plid_random = true,
                _ => return Err(bad(key, v, "roundrobin or random")),
            },
            "rate_process" if v == "linear" => {}
            "kb_base" if v == "1024" => {}
            "rate_process" | "kb_base" => {
                return Err(JobError::NotImplemented {
                    option: key.to_string(),
                    reason: format!(
                        "only the default ('{}') is supported",
                        if key == "kb_base" { "1024" } else { "linear" }
                    ),
                });
            }
            _ => unreachable!("option '{key}' is in SUPPORTED_OPTIONS but has no handler"),
        }
        Ok(())
    }
}

/// Every option [`JobSpec::set`] applies (rather than ignores), for help texts.
pub const SUPPORTED_OPTIONS: &[&str] = &[
    "name",
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "bssplit",
    "blockalign",
    "ba",
    "iodepth",
    "numjobs",
    "loops",
    "rwmixread",
    "rwmixwrite",
    "size",
    "offset",
    "offset_increment",
    "io_size",
    "io_limit",
    "random_distribution",
    "norandommap",
    "number_ios",
    "runtime",
    "timeout",
    "time_based",
    "ramp_time",
    "rate",
    "rate_iops",
    "randseed",
    "placement",
    "channels",
    "ways",
    "dies",
    "planes",
    "queue_priority",
    "end_fsync",
    "zonemode",
    "zonesize",
    "max_open_zones",
    "job_max_open_zones",
    "zone_reset_threshold",
    "zone_reset_frequency",
    "read_beyond_wp",
    "fdp",
    "dataplacement",
    "fdp_pli",
    "plids",
    "fdp_pli_select",
    "plid_select",
    "randrepeat",
    "rand_repeatable",
    "rate_process",
    "kb_base",
];

/// A list of placement identifiers as fio takes them: numbers and ranges, comma-separated
/// (`0,2-4` is 0, 2, 3, 4).
fn parse_plids(v: &str) -> Result<Vec<u16>, String> {
    let expected = || "placement identifiers: numbers or ranges such as 0,2-4".to_string();
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u16, u16) =
            (a.trim().parse().map_err(|_| expected())?, b.trim().parse().map_err(|_| expected())?);
        if a > b || out.len() + (b - a) as usize >= 128 {
            return Err(expected());
        }
        out.extend(a..=b);
    }
    Ok(out)
}
