//! The snapshot section that holds the FTL's DRAM state ([`DramState`]), after the array
//! state (format version 2 on):
//!
//! ```text
//!   u32 lines, then per line: u32 LPN, u8 dirty     (clean lines, then dirty, each LRU first)
//!   4 x u64  the firmware RNG's state (xoshiro256++)
//!   2 x u64  the placement cursor, the translation pages' turn
//!   u64 release counter, u64 close counter
//!   u32 free blocks, then per block: u32 block, u64 key in its pool
//! ```
//!
//! Everything little-endian.

use std::io::{self, Read, Write};

use nand::Lpn;
use sim::SimRng;

use crate::ftl::{DramState, PoolState};

/// Writes `s`.
pub(super) fn write(w: &mut impl Write, s: &DramState) -> io::Result<()> {
    w.write_all(&(s.lines.len() as u32).to_le_bytes())?;
    for &(lpn, dirty) in &s.lines {
        w.write_all(&lpn.0.to_le_bytes())?;
        w.write_all(&[dirty as u8])?;
    }
    for word in rng_state(&s.rng) {
        w.write_all(&word.to_le_bytes())?;
    }
    for v in [s.alloc[0], s.alloc[1], s.pools.release_seq, s.pools.close_seq] {
        w.write_all(&v.to_le_bytes())?;
    }
    w.write_all(&(s.pools.free.len() as u32).to_le_bytes())?;
    for &(b, key) in &s.pools.free {
        w.write_all(&b.to_le_bytes())?;
        w.write_all(&key.to_le_bytes())?;
    }
    Ok(())
}

/// Reads a section [`write`] wrote for a device of `total_blocks` blocks and `units` units.
pub(super) fn read(r: &mut impl Read, total_blocks: u32, units: u64) -> io::Result<DramState> {
    let bad = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
    let n = read_u32(r)?;
    if n as u64 > units {
        return Err(bad(format!("{n} cache lines for {units} units")));
    }
    let mut lines = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let lpn = Lpn(read_u32(r)?);
        let mut d = [0u8; 1];
        r.read_exact(&mut d)?;
        lines.push((lpn, d[0] != 0));
    }
    let mut words = [0u64; 4];
    for w in &mut words {
        *w = read_u64(r)?;
    }
    let rng = rng_from_state(words).map_err(|e| bad(format!("RNG state: {e}")))?;
    let alloc = [read_u64(r)?, read_u64(r)?];
    let (release_seq, close_seq) = (read_u64(r)?, read_u64(r)?);
    let n = read_u32(r)?;
    if n > total_blocks {
        return Err(bad(format!("{n} free blocks of {total_blocks}")));
    }
    let mut free = Vec::with_capacity(n as usize);
    for _ in 0..n {
        free.push((read_u32(r)?, read_u64(r)?));
    }
    Ok(DramState { lines, rng, alloc, pools: PoolState { free, release_seq, close_seq } })
}

fn read_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn read_u64(r: &mut impl Read) -> io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// The RNG's state as words (through its serde form, the only way the type shows it).
fn rng_state(rng: &SimRng) -> [u64; 4] {
    let v = serde_json::to_value(rng).expect("the RNG serialises");
    serde_json::from_value::<RngState>(v).expect("xoshiro256++ is four words").s
}

fn rng_from_state(s: [u64; 4]) -> Result<SimRng, serde_json::Error> {
    serde_json::from_value(serde_json::to_value(RngState { s })?)
}

/// xoshiro256++'s serde form.
#[derive(serde::Serialize, serde::Deserialize)]
struct RngState {
    s: [u64; 4],
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn the_section_round_trips_and_the_rng_continues_its_stream() {
        let mut rng = SimRng::seed_from_u64(11);
        rng.next_u64();
        let s = DramState {
            lines: vec![(Lpn(7), false), (Lpn(3), true), (Lpn(9), true)],
            rng: rng.clone(),
            alloc: [12345, 17],
            pools: PoolState { free: vec![(2, 40), (5, 3)], release_seq: 99, close_seq: 123 },
        };
        let mut bytes = Vec::new();
        write(&mut bytes, &s).unwrap();
        let back = read(&mut bytes.as_slice(), 8, 100).unwrap();
        assert_eq!(back, s);
        let mut again = back.rng;
        assert_eq!(again.next_u64(), rng.next_u64(), "the restored RNG draws what the saved one would");
        assert!(read(&mut &bytes[..bytes.len() - 1], 8, 100).is_err(), "a cut section");
        assert!(read(&mut bytes.as_slice(), 1, 100).is_err(), "more free blocks than blocks");
    }
}
