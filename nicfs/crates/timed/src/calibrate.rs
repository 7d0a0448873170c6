//! Measuring [`CpuCosts`]: this implementation's code paths, timed on the machine it runs on
//! with PM emulated in DRAM and no cost model. The only place the model reads a wall clock;
//! nothing the figures compute depends on it (they use the configured costs).
//!
//! Each measure is the best of several repetitions (the least disturbed by other load).
//! Moving data is not CPU cost in the model (PM and copy-engine bandwidth charge it): the
//! back end is measured with a copy engine that discards, the per-KiB write cost is the
//! payload checksum alone, and a DRAM copy of the bytes read is subtracted from reads. Other
//! memory accesses (metadata, on DRAM here) stay in, so the costs are upper bounds.

use std::sync::Arc;
use std::time::Instant;

use nicfs_backend::{BackendConfig, DirectLink, open_parts};
use nicfs_comm::CommRegion;
use nicfs_frontend::{Client, FrontendConfig};
use nicfs_layout::{FormatConfig, ROOT_INO, mode};
use nicfs_pm::{FastPm, MappedFile, Pm, PmAddr, SharedPm};
use nicfs_store::mkfs;

use crate::config::CpuCosts;

/// A copy engine that moves nothing: the back end's CPU cost without the data copies.
struct Discard(u64);

impl Pm for Discard {
    fn len(&self) -> u64 {
        self.0
    }
    fn read(&self, _: PmAddr, buf: &mut [u8]) {
        buf.fill(0);
    }
    fn store(&self, _: PmAddr, _: &[u8]) {}
    fn store_nt(&self, _: PmAddr, _: &[u8]) {}
    fn flush(&self, _: PmAddr, _: u64) {}
    fn fence(&self) {}
    fn store_u64_atomic(&self, _: PmAddr, _: u64) {}
    fn load_u64_atomic(&self, _: PmAddr) -> u64 {
        0
    }
}

fn best(reps: usize, mut f: impl FnMut() -> f64) -> f64 {
    (0..reps).map(|_| f()).fold(f64::INFINITY, f64::min)
}

/// Measures the costs on this machine, for a host clock of `clock_mhz`.
pub fn measure(clock_mhz: u64) -> Result<CpuCosts, String> {
    let cyc = |ns: f64| (ns * clock_mhz as f64 / 1000.0).round() as u64;
    let e = |x: nicfs_store::FsError| x.to_string();
    let mut out = CpuCosts::default();
    // Payload checksum, per KiB.
    let buf = vec![0x5au8; 1 << 20];
    let crc_ns = best(5, || {
        let t = Instant::now();
        std::hint::black_box(crc32fast::hash(std::hint::black_box(&buf)));
        t.elapsed().as_nanos() as f64 / 1024.0
    });
    out.fe_write_kib = cyc(crc_ns).max(1);
    let mut dst = vec![0u8; 1 << 20];
    let copy_ns = best(5, || {
        let t = Instant::now();
        dst.copy_from_slice(std::hint::black_box(&buf));
        std::hint::black_box(&dst);
        t.elapsed().as_nanos() as f64 / 1024.0
    });
    let records = 4096u64;
    let fmt = FormatConfig {
        size_bytes: 256 << 20,
        inodes: 1024,
        log_spaces: 1,
        log_headers: 8192,
        log_data_bytes: 64 << 20,
        journal_blocks: 512,
    };
    let mut stage = [0f64; 4];
    let mut patch_small = 0f64;
    let (mut write_ns, mut read_ns, mut read_block_ns) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
    for rep in 0..5 {
        let pm: SharedPm =
            Arc::new(FastPm::new(MappedFile::anonymous(fmt.size_bytes).map_err(|x| x.to_string())?));
        mkfs(pm.as_ref(), &fmt, 1).map_err(e)?;
        let comm = Arc::new(CommRegion::anonymous().map_err(|x| x.to_string())?);
        let discard: SharedPm = Arc::new(Discard(fmt.size_bytes));
        let (sh, _) = open_parts(pm.clone(), pm.clone(), discard, comm.clone(), BackendConfig::free(), true)
            .map_err(e)?;
        let c = Client::attach_with(
            pm,
            comm,
            0,
            Box::new(DirectLink::new(sh.clone(), 0)),
            FrontendConfig::default(),
        )
        .map_err(e)?;
        let ino = c.create(ROOT_INO, b"f", mode::S_IFREG | 0o644, 0, 0, 0, b"").map_err(e)?.ino;
        sh.drain_inline(0, false).map_err(e)?;
        // The front end: 256-byte appends (its fixed cost; the copy is PM time in the model).
        let data = vec![7u8; 256];
        let t = Instant::now();
        for i in 0..records {
            c.write(ino, i * 256, &data).map_err(e)?;
        }
        write_ns = write_ns.min(t.elapsed().as_nanos() as f64 / records as f64);
        sh.drain_inline(0, false).map_err(e)?;
        // The back end: 4 KiB appends (whole blocks, as the drain figures write).
        let block = vec![9u8; 4096];
        for i in 0..records {
            c.write(ino, (1 << 20) + i * 4096, &block).map_err(e)?;
        }
        // The back end's stages over those records, batch by batch.
        let mut next = sh.head(0);
        let mut st = [0f64; 4];
        loop {
            let t0 = Instant::now();
            let Some(b) = sh.stage_fetch(0, next, false).map_err(e)? else { break };
            let t1 = Instant::now();
            let l = sh.stage_locate(&b);
            let t2 = Instant::now();
            let s = sh.stage_merge(&b, &l);
            let t3 = Instant::now();
            sh.stage_patch(&b, &s).map_err(e)?;
            let t4 = Instant::now();
            next = b.end;
            for (k, (a, z)) in [(t0, t1), (t1, t2), (t2, t3), (t3, t4)].into_iter().enumerate() {
                st[k] += z.duration_since(a).as_nanos() as f64;
            }
        }
        let per = st.map(|x| x / records as f64);
        for k in 0..4 {
            stage[k] = if rep == 0 { per[k] } else { stage[k].min(per[k]) };
        }
        // Patch's fixed part: a batch of one record.
        c.write(ino, (1 << 20) + records * 4096, &block).map_err(e)?;
        let b = sh.stage_fetch(0, next, false).map_err(e)?.ok_or("no batch")?;
        let l = sh.stage_locate(&b);
        let s = sh.stage_merge(&b, &l);
        let t = Instant::now();
        sh.stage_patch(&b, &s).map_err(e)?;
        let one = t.elapsed().as_nanos() as f64;
        patch_small = if rep == 0 { one } else { patch_small.min(one) };
        // Reads of applied data: 256 B (one block) and 16 KiB (four blocks), after a pass
        // that faults the pages in (the discarding copy engine never touched them).
        let mut small = vec![0u8; 256];
        let mut big = vec![0u8; 16384];
        for i in 0..records / 4 {
            c.read(ino, (1 << 20) + i * 16384, &mut big).map_err(e)?;
        }
        let t = Instant::now();
        for i in 0..records {
            c.read(ino, (1 << 20) + i * 4096, &mut small).map_err(e)?;
        }
        let r1 = t.elapsed().as_nanos() as f64 / records as f64 - copy_ns / 4.0;
        let t = Instant::now();
        for i in 0..records / 4 {
            c.read(ino, (1 << 20) + i * 16384, &mut big).map_err(e)?;
        }
        let r4 = t.elapsed().as_nanos() as f64 / (records / 4) as f64 - 16.0 * copy_ns;
        read_block_ns = read_block_ns.min(((r4 - r1) / 3.0).max(0.0));
        read_ns = read_ns.min(r1);
    }
    out.fe_write = cyc((write_ns - copy_ns / 4.0).max(0.0));
    out.fe_read_block = cyc(read_block_ns);
    out.fe_read = cyc((read_ns - read_block_ns).max(0.0));
    out.fetch_record = cyc(stage[0]);
    out.locate_record = cyc(stage[1]);
    out.merge_record = cyc(stage[2]);
    out.patch_batch = cyc(patch_small);
    out.patch_record = cyc((stage[3] - patch_small / 256.0).max(0.0));
    Ok(out)
}
