//! Device snapshots: an aged device saved to a file and started from again.
//!
//! A snapshot holds the configuration it was made under and the whole metadata state of the
//! device — per block its write pointer, valid count, erase count, bad flag, the stream that
//! filled it and when it closed; per mapping unit the LPN it holds and whether it is current,
//! and its data tag. The FTL's maps are rebuilt from that on load ([`Mount::Clean`]). Beside it
//! the FTL's state in DRAM ([`DramState`]): the data cache's lines (an aged device's cache is
//! full of dirty lines), the firmware's random stream, the allocation counters and the free
//! pools' order, so that a run from the snapshot is the run from the device that was saved.
//! Page payloads are not kept: snapshots are for the metadata-only store.
//!
//! A cache line is saved only if it holds what flash holds (clean lines, and the dirty lines
//! ageing leaves, whose data is the flash copy); its data is read back from the array on load.
//! A dirty line with newer data makes the device not quiescent: flush it first
//! ([`Device::quiesce`]).
//!
//! File layout: the magic `SSDLSNAP`, a little-endian `u32` format version, a `u64` header
//! length, the header (JSON, [`SnapshotInfo`]), then one zstd frame (with its content
//! checksum) holding the state sections in the order above (the DRAM section as `dram.rs`
//! describes it). Version 1 files, which have no DRAM section, still load: their devices start
//! with an empty cache, as they always did.

mod dram;

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use nand::store::MetaStore;
use nand::{BlockState, FlashArray, Geometry};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::DeviceConfig;
use crate::device::Device;
use crate::ftl::{BlockHint, DramState, Mount, MountError, MountReport, Stream};

const MAGIC: &[u8; 8] = b"SSDLSNAP";
/// The format written: 2 added the DRAM section.
const VERSION: u32 = 2;
/// The oldest format read.
const OLDEST: u32 = 1;
/// Refuse headers larger than this (a corrupt length must not allocate gigabytes).
const MAX_HEADER: u64 = 16 << 20;

/// What a snapshot says about itself (its JSON header).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapshotInfo {
    /// How the device was aged, e.g. `steady-state:2 (fast path)`.
    pub aged: String,
    /// Seed of the ageing run.
    pub seed: u64,
    /// Logical bytes holding data.
    pub mapped_bytes: u64,
    /// Lowest, mean and highest block erase count.
    pub erase_counts: [f64; 3],
    /// Free blocks when saved.
    pub free_blocks: u64,
    /// The ssdlab version that wrote it.
    pub ssdlab_version: String,
    /// The device configuration the state belongs to.
    pub config: DeviceConfig,
}

/// A snapshot read into memory, ready to start a device from.
pub struct Snapshot {
    /// Its header.
    pub info: SnapshotInfo,
    blocks: Vec<BlockState>,
    hints: Vec<BlockHint>,
    units: Vec<u32>,
    tags: Vec<u16>,
    next_seq: u64,
    /// The FTL's DRAM state (`None`: a version 1 file).
    dram: Option<DramState>,
}

/// Why a snapshot could not be saved, read or used.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The snapshot file.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// The file is not a usable snapshot.
    #[error("{path}: not a usable ssdlab snapshot: {why}")]
    Invalid {
        /// The snapshot file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The device cannot be saved now.
    #[error("cannot snapshot the device: {0}")]
    NotQuiescent(#[source] NotQuiescent),
    /// The snapshot belongs to another configuration.
    #[error(
        "the snapshot was aged under a different configuration: {field} is {snapshot} in the snapshot but {config} here{hint}"
    )]
    ConfigMismatch {
        /// The first differing field, as a dotted path.
        field: String,
        /// Its value in the snapshot's configuration.
        snapshot: String,
        /// Its value in the configuration asked for.
        config: String,
        /// What the user can do about it.
        hint: &'static str,
    },
}

/// Why a device cannot be saved now.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NotQuiescent {
    /// Cache lines hold data newer than flash (or are being filled or written back).
    #[error("{0} dirty cache lines hold data newer than flash")]
    DirtyLines(u64),
    /// Mapping segments in DRAM are newer than their translation pages.
    #[error("{0} dirty mapping segments in DRAM")]
    DirtySegments(u64),
    /// An FTL invariant does not hold (work in flight, or a bug).
    #[error(transparent)]
    Broken(#[from] crate::ftl::Violation),
    /// The device keeps page data; snapshots hold metadata only.
    #[error("snapshots hold metadata only; build the device with the metadata store")]
    NotMetadata,
}

/// Configuration fields that shape the saved state itself; they must match even when other
/// differences are allowed.
const STATE_FIELDS: &[&str] =
    &["geometry", "ftl.op", "ftl.mapping.kind", "ftl.mapping.segment_entries", "ftl.bad_block_rate"];

/// Compares the configuration a snapshot was made under with the one asked for. Differences
/// in `name` and `description` never matter. Any other difference is refused, unless `relaxed`
/// — then only the fields that shape the saved state must match (geometry, over-provisioning,
/// mapping scheme, bad-block rate), and the other differences come back as notes.
pub fn check_config(
    snapshot: &DeviceConfig,
    config: &DeviceConfig,
    relaxed: bool,
) -> Result<Vec<String>, SnapshotError> {
    let a = serde_json::to_value(snapshot).expect("configurations serialise");
    let b = serde_json::to_value(config).expect("configurations serialise");
    let mut diffs = Vec::new();
    diff("", &a, &b, &mut diffs);
    diffs.retain(|(f, _, _)| f != "name" && f != "description");
    let shapes_state = |f: &str| STATE_FIELDS.iter().any(|s| f == *s || f.starts_with(&format!("{s}.")));
    let refused = diffs.iter().find(|(f, _, _)| !relaxed || shapes_state(f));
    if let Some((field, snapshot, config)) = refused {
        let hint = if shapes_state(field) {
            " (it shapes the saved state: age the device again under this configuration)"
        } else {
            " (run with the snapshot's own configuration, or allow run-time differences with --allow-config-change)"
        };
        return Err(SnapshotError::ConfigMismatch {
            field: field.clone(),
            snapshot: snapshot.clone(),
            config: config.clone(),
            hint,
        });
    }
    Ok(diffs.into_iter().map(|(f, s, c)| format!("{f}: {s} when aged, {c} now")).collect())
}

/// Every leaf where `a` and `b` differ, as (dotted path, value in a, value in b).
fn diff(path: &str, a: &Value, b: &Value, out: &mut Vec<(String, String, String)>) {
    let join = |k: &str| if path.is_empty() { k.to_string() } else { format!("{path}.{k}") };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) if x.get("kind") == y.get("kind") => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                diff(&join(k), x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null), out);
            }
        }
        (Value::Object(x), Value::Object(_)) if x.contains_key("kind") => {
            out.push((join("kind"), a["kind"].to_string(), b["kind"].to_string()));
        }
        _ if a != b => out.push((path.to_string(), a.to_string(), b.to_string())),
        _ => {}
    }
}

impl Snapshot {
    /// Saves `dev`, which must be quiescent (no request, write-back or GC in flight, no cache
    /// line newer than flash and no dirty mapping entries in DRAM: run [`Device::quiesce`]
    /// first, unless the device is as the fast preconditioner left it), to `path`, streaming
    /// the state without copying it. `seed` is the seed the device was aged with. Writes a
    /// temporary file and renames it into place, so a crash never leaves half a snapshot under
    /// the name.
    pub fn save(dev: &Device, path: &Path, aged: &str, seed: u64) -> Result<SnapshotInfo, SnapshotError> {
        let ftl = &dev.ftl;
        let array = dev.platform.fil.array().borrow();
        let Some(meta) = array.store().as_any().downcast_ref::<MetaStore>() else {
            return Err(SnapshotError::NotQuiescent(NotQuiescent::NotMetadata));
        };
        let dram = ftl
            .dram_state(meta.tags())
            .map_err(|n| SnapshotError::NotQuiescent(NotQuiescent::DirtyLines(n)))?;
        if ftl.dirty_segments() != 0 {
            return Err(SnapshotError::NotQuiescent(NotQuiescent::DirtySegments(ftl.dirty_segments())));
        }
        ftl.check_invariants().map_err(|v| SnapshotError::NotQuiescent(NotQuiescent::Broken(v)))?;
        let geo = array.geometry();
        let counts: Vec<f64> =
            array.blocks().iter().filter(|b| !b.bad).map(|b| b.erase_count as f64).collect();
        let mean = counts.iter().sum::<f64>() / counts.len().max(1) as f64;
        let info = SnapshotInfo {
            aged: aged.to_string(),
            seed,
            mapped_bytes: ftl.mapped_units() * geo.unit_bytes() as u64,
            erase_counts: [
                counts.iter().copied().fold(f64::INFINITY, f64::min).min(f64::MAX),
                mean,
                counts.iter().copied().fold(0.0, f64::max),
            ],
            free_blocks: ftl.free_blocks(),
            ssdlab_version: env!("CARGO_PKG_VERSION").to_string(),
            config: dev.platform.config.clone(),
        };
        let state = StateRef {
            blocks: array.blocks(),
            hints: &ftl.block_hints(),
            units: array.raw_units(),
            tags: meta.tags(),
            next_seq: array.next_seq(),
            dram: &dram,
        };
        write_file(path, &info, &state)?;
        Ok(info)
    }

    /// Reads only the header of the snapshot at `path`.
    pub fn read_info(path: &Path) -> Result<SnapshotInfo, SnapshotError> {
        let file =
            File::open(path).map_err(|source| SnapshotError::Io { path: path.to_path_buf(), source })?;
        Ok(read_header(&mut BufReader::new(file), path)?.0)
    }

    /// Reads the snapshot at `path`, checking its format and checksum.
    pub fn load(path: &Path) -> Result<Snapshot, SnapshotError> {
        let invalid = |why: String| SnapshotError::Invalid { path: path.to_path_buf(), why };
        let file =
            File::open(path).map_err(|source| SnapshotError::Io { path: path.to_path_buf(), source })?;
        let mut r = BufReader::with_capacity(1 << 20, file);
        let (info, version) = read_header(&mut r, path)?;
        info.config.validate().map_err(|e| invalid(format!("its configuration is invalid: {e}")))?;
        let geo = info.config.geometry.clone();
        let z = zstd::Decoder::with_buffer(r).map_err(|e| invalid(e.to_string()))?;
        let mut z = BufReader::with_capacity(1 << 20, z);
        let (blocks, hints, units, tags, next_seq) =
            read_state(&mut z, &geo).map_err(|e| invalid(format!("state: {e}")))?;
        let dram = (version >= 2)
            .then(|| dram::read(&mut z, geo.total_blocks(), geo.total_units() as u64))
            .transpose()
            .map_err(|e| invalid(format!("DRAM state: {e}")))?;
        let mut rest = [0u8; 1];
        match z.read(&mut rest) {
            Ok(0) => {}
            Ok(_) => return Err(invalid("data after the end of the state".into())),
            Err(e) => return Err(invalid(format!("state: {e}"))),
        }
        Ok(Snapshot { info, blocks, hints, units, tags, next_seq, dram })
    }

    /// Starts a device from this snapshot under `cfg` (checked against the snapshot's own with
    /// [`check_config`] first) and `seed`: the saved array, maps and DRAM state. With the seed
    /// the device was aged with, the firmware's random stream continues where the saved one
    /// stopped, so the run is the one the same seed gives on the device aged inline; any
    /// other seed starts it from that seed.
    pub fn into_device(self, cfg: &DeviceConfig, seed: u64) -> Result<(Device, MountReport), MountError> {
        let geo = cfg.geometry.clone();
        let store = MetaStore::from_tags(&geo, self.tags).map_err(MountError::ArrayState)?;
        let array = FlashArray::from_raw(geo, Box::new(store), self.blocks, self.units, self.next_seq)
            .map_err(MountError::ArrayState)?;
        let (dev, report) = Device::mount(cfg, array, seed, Mount::Clean(&self.hints))?;
        if let Some(dram) = &self.dram {
            let array = dev.platform.fil.array().borrow();
            let meta = array.store().as_any().downcast_ref::<MetaStore>().expect("built over a MetaStore");
            dev.ftl.restore_dram_state(dram, seed == self.info.seed, meta.tags()).map_err(|b| {
                MountError::ArrayState(format!(
                    "the saved free pools hold block {}, which is not free in the saved array",
                    b.0
                ))
            })?;
        }
        Ok((dev, report))
    }
}

/// The state sections, borrowed from a device.
struct StateRef<'a> {
    blocks: &'a [BlockState],
    hints: &'a [BlockHint],
    units: &'a [u32],
    tags: &'a [u16],
    next_seq: u64,
    dram: &'a DramState,
}

fn write_file(path: &Path, info: &SnapshotInfo, state: &StateRef<'_>) -> Result<(), SnapshotError> {
    let io_err = |source| SnapshotError::Io { path: path.to_path_buf(), source };
    let tmp = path.with_extension("partial");
    let file = File::create(&tmp).map_err(io_err)?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let header = serde_json::to_vec_pretty(info).expect("snapshot headers serialise");
    w.write_all(MAGIC).map_err(io_err)?;
    w.write_all(&VERSION.to_le_bytes()).map_err(io_err)?;
    w.write_all(&(header.len() as u64).to_le_bytes()).map_err(io_err)?;
    w.write_all(&header).map_err(io_err)?;
    let mut z = zstd::Encoder::new(w, 1).map_err(io_err)?;
    z.include_checksum(true).map_err(io_err)?;
    write_state(&mut BufWriter::with_capacity(1 << 20, &mut z), state).map_err(io_err)?;
    let w = z.finish().map_err(io_err)?;
    let file = w.into_inner().map_err(|e| io_err(e.into_error()))?;
    file.sync_all().map_err(io_err)?;
    std::fs::rename(&tmp, path).map_err(io_err)
}

fn write_state(w: &mut impl Write, s: &StateRef<'_>) -> io::Result<()> {
    for b in s.blocks {
        w.write_all(&b.write_ptr.to_le_bytes())?;
        w.write_all(&b.valid_units.to_le_bytes())?;
        w.write_all(&b.erase_count.to_le_bytes())?;
        w.write_all(&[b.bad as u8])?;
    }
    for h in s.hints {
        w.write_all(&[h.stream as u8])?;
        w.write_all(&h.closed_seq.to_le_bytes())?;
    }
    for chunk in s.units.chunks(1 << 16) {
        let bytes: Vec<u8> = chunk.iter().flat_map(|u| u.to_le_bytes()).collect();
        w.write_all(&bytes)?;
    }
    for chunk in s.tags.chunks(1 << 16) {
        let bytes: Vec<u8> = chunk.iter().flat_map(|t| t.to_le_bytes()).collect();
        w.write_all(&bytes)?;
    }
    w.write_all(&s.next_seq.to_le_bytes())?;
    dram::write(w, s.dram)?;
    w.flush()
}

/// The header and the format version.
fn read_header(r: &mut impl Read, path: &Path) -> Result<(SnapshotInfo, u32), SnapshotError> {
    let invalid = |why: String| SnapshotError::Invalid { path: path.to_path_buf(), why };
    let io_err = |e: io::Error| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            invalid("the file ends early".into())
        } else {
            SnapshotError::Io { path: path.to_path_buf(), source: e }
        }
    };
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic).map_err(io_err)?;
    if &magic != MAGIC {
        return Err(invalid("it does not start with SSDLSNAP (made by `ssdlab age --out`?)".into()));
    }
    let mut v = [0u8; 4];
    r.read_exact(&mut v).map_err(io_err)?;
    let version = u32::from_le_bytes(v);
    if !(OLDEST..=VERSION).contains(&version) {
        return Err(invalid(format!(
            "format version {version}; this ssdlab reads versions {OLDEST} to {VERSION}"
        )));
    }
    let mut len = [0u8; 8];
    r.read_exact(&mut len).map_err(io_err)?;
    let len = u64::from_le_bytes(len);
    if len > MAX_HEADER {
        return Err(invalid(format!("a {len}-byte header")));
    }
    let mut header = vec![0u8; len as usize];
    r.read_exact(&mut header).map_err(io_err)?;
    let info = serde_json::from_slice(&header).map_err(|e| invalid(format!("header: {e}")))?;
    Ok((info, version))
}

type State = (Vec<BlockState>, Vec<BlockHint>, Vec<u32>, Vec<u16>, u64);

fn read_state(r: &mut impl Read, geo: &Geometry) -> io::Result<State> {
    let nb = geo.total_blocks() as usize;
    let nu = geo.total_units() as usize;
    let mut buf = vec![0u8; 13 * nb];
    r.read_exact(&mut buf)?;
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
    let blocks = buf
        .chunks_exact(13)
        .map(|c| BlockState {
            write_ptr: u32_at(c, 0),
            valid_units: u32_at(c, 4),
            erase_count: u32_at(c, 8),
            bad: c[12] != 0,
        })
        .collect();
    let mut buf = vec![0u8; 9 * nb];
    r.read_exact(&mut buf)?;
    let hints = buf
        .chunks_exact(9)
        .map(|c| {
            let stream = Stream::from_u8(c[0])
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("stream {}", c[0])))?;
            Ok(BlockHint { stream, closed_seq: u64::from_le_bytes(c[1..9].try_into().expect("8 bytes")) })
        })
        .collect::<io::Result<Vec<_>>>()?;
    let mut units = vec![0u32; nu];
    let mut buf = vec![0u8; 4 << 16];
    for chunk in units.chunks_mut(1 << 16) {
        let bytes = &mut buf[..chunk.len() * 4];
        r.read_exact(bytes)?;
        for (u, b) in chunk.iter_mut().zip(bytes.chunks_exact(4)) {
            *u = u32::from_le_bytes(b.try_into().expect("4 bytes"));
        }
    }
    let mut tags = vec![0u16; nu];
    for chunk in tags.chunks_mut(1 << 16) {
        let bytes = &mut buf[..chunk.len() * 2];
        r.read_exact(bytes)?;
        for (t, b) in chunk.iter_mut().zip(bytes.chunks_exact(2)) {
            *t = u16::from_le_bytes(b.try_into().expect("2 bytes"));
        }
    }
    let mut seq = [0u8; 8];
    r.read_exact(&mut seq)?;
    Ok((blocks, hints, units, tags, u64::from_le_bytes(seq)))
}
