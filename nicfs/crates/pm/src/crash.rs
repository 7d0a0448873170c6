//! The crash back end: records stores per cache line and produces post-crash images.
//!
//! Model (one cache line = the unit of write-back):
//!
//! * every line starts *clean*: its durable content equals what the program sees;
//! * a `store` makes the line *dirty*; until it is flushed and fenced, a power failure may
//!   leave either the old durable content or the newest content (the hardware may evict the
//!   line at any time);
//! * a `flush` snapshots the line; a `fence` makes every snapshot durable. If the line was
//!   stored to again after its flush, it stays dirty, and a crash may also leave the snapshot;
//! * `store_nt` counts as store + flush.
//!
//! Before every fence takes effect an optional observer sees a [`CrashPoint`], from which the
//! crash checker draws images: all pending lines lost, all pending lines kept, seeded random
//! subsets (each pending line independently old / snapshot / newest), and torn images in which
//! each 8-byte word of a pending line is chosen independently. PM guarantees failure
//! atomicity for aligned 8-byte stores only: a cache line may reach the media in part.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::region::check_range;
use crate::{CACHE_LINE, Pm, PmAddr};

const LINE: usize = CACHE_LINE as usize;

/// Observer called before each fence; it must not call back into the same `CrashPm`.
pub type FenceObserver = Box<dyn FnMut(&CrashPoint<'_>) + Send>;

#[derive(Default)]
struct Dirty {
    flushed: Option<[u8; LINE]>,
}

struct State {
    live: Vec<u8>,
    durable: Vec<u8>,
    dirty: BTreeMap<u64, Dirty>,
    observer: Option<FenceObserver>,
    fences: u64,
}

/// PM that keeps "live" bytes (what programs see) and "durable" bytes (what survives power
/// loss) apart, and can enumerate the images a crash could leave.
pub struct CrashPm {
    len: u64,
    state: Mutex<State>,
}

/// The machine state just before a fence: what a power failure at that instant may leave.
pub struct CrashPoint<'a> {
    live: &'a [u8],
    durable: &'a [u8],
    dirty: &'a BTreeMap<u64, Dirty>,
    fence_index: u64,
}

impl CrashPm {
    /// A zeroed namespace of `len` bytes.
    pub fn new(len: u64) -> CrashPm {
        CrashPm::from_image(vec![0; len as usize])
    }

    /// A namespace whose live and durable content is `image` (e.g. a post-crash image).
    pub fn from_image(image: Vec<u8>) -> CrashPm {
        CrashPm {
            len: image.len() as u64,
            state: Mutex::new(State {
                durable: image.clone(),
                live: image,
                dirty: BTreeMap::new(),
                observer: None,
                fences: 0,
            }),
        }
    }

    /// Installs the observer called before every fence (replacing any earlier one).
    pub fn set_observer(&self, observer: Option<FenceObserver>) {
        self.lock().observer = observer;
    }

    /// Number of fences executed so far.
    pub fn fences(&self) -> u64 {
        self.lock().fences
    }

    /// The bytes that would survive if power failed now and no pending line were written back.
    pub fn durable_image(&self) -> Vec<u8> {
        self.lock().durable.clone()
    }

    /// The bytes programs currently see.
    pub fn live_image(&self) -> Vec<u8> {
        self.lock().live.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lines(addr: PmAddr, n: u64) -> std::ops::RangeInclusive<u64> {
        let last = if n == 0 { addr.line() } else { (addr.get() + n - 1) / CACHE_LINE };
        addr.line()..=last
    }
}

fn line_of(buf: &[u8], line: u64) -> [u8; LINE] {
    let s = (line * CACHE_LINE) as usize;
    buf[s..s + LINE].try_into().expect("line slice")
}

impl State {
    fn store(&mut self, addr: PmAddr, data: &[u8]) {
        let s = addr.get() as usize;
        self.live[s..s + data.len()].copy_from_slice(data);
        for line in CrashPm::lines(addr, data.len() as u64) {
            self.dirty.entry(line).or_default();
        }
    }

    fn flush(&mut self, addr: PmAddr, n: u64) {
        if n == 0 {
            return;
        }
        for line in CrashPm::lines(addr, n) {
            if let Some(d) = self.dirty.get_mut(&line) {
                d.flushed = Some(line_of(&self.live, line));
            }
        }
    }

    fn fence(&mut self) {
        if let Some(mut obs) = self.observer.take() {
            obs(&CrashPoint {
                live: &self.live,
                durable: &self.durable,
                dirty: &self.dirty,
                fence_index: self.fences,
            });
            self.observer = Some(obs);
        }
        self.fences += 1;
        let live = &self.live;
        let durable = &mut self.durable;
        self.dirty.retain(|&line, d| {
            if let Some(snap) = d.flushed.take() {
                let s = (line * CACHE_LINE) as usize;
                durable[s..s + LINE].copy_from_slice(&snap);
                snap != line_of(live, line)
            } else {
                true
            }
        });
    }
}

impl Pm for CrashPm {
    fn len(&self) -> u64 {
        self.len
    }

    fn read(&self, addr: PmAddr, buf: &mut [u8]) {
        check_range(self.len, addr, buf.len() as u64);
        let st = self.lock();
        let s = addr.get() as usize;
        buf.copy_from_slice(&st.live[s..s + buf.len()]);
    }

    fn store(&self, addr: PmAddr, data: &[u8]) {
        check_range(self.len, addr, data.len() as u64);
        self.lock().store(addr, data);
    }

    fn store_nt(&self, addr: PmAddr, data: &[u8]) {
        check_range(self.len, addr, data.len() as u64);
        let mut st = self.lock();
        st.store(addr, data);
        st.flush(addr, data.len() as u64);
    }

    fn flush(&self, addr: PmAddr, len: u64) {
        check_range(self.len, addr, len);
        self.lock().flush(addr, len);
    }

    fn fence(&self) {
        self.lock().fence();
    }

    fn store_u64_atomic(&self, addr: PmAddr, value: u64) {
        assert!(addr.is_aligned(8), "unaligned atomic PM access at {addr}");
        self.store(addr, &value.to_le_bytes());
    }

    fn load_u64_atomic(&self, addr: PmAddr) -> u64 {
        assert!(addr.is_aligned(8), "unaligned atomic PM access at {addr}");
        self.read_u64(addr)
    }
}

/// SplitMix64: the tiny deterministic generator behind random subsets.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl CrashPoint<'_> {
    /// Index of the fence about to execute (0-based).
    pub fn fence_index(&self) -> u64 {
        self.fence_index
    }

    /// Number of cache lines whose durable content is not settled.
    pub fn pending_lines(&self) -> usize {
        self.dirty.len()
    }

    /// Image with every pending line lost.
    pub fn image_none(&self) -> Vec<u8> {
        self.durable.to_vec()
    }

    /// Image with every pending line written back at its newest content.
    pub fn image_all(&self) -> Vec<u8> {
        let mut img = self.durable.to_vec();
        for &line in self.dirty.keys() {
            let s = (line * CACHE_LINE) as usize;
            img[s..s + LINE].copy_from_slice(&self.live[s..s + LINE]);
        }
        img
    }

    /// Image where each pending line independently keeps its old content, its flushed
    /// snapshot (if any) or its newest content, chosen by a generator seeded with `seed`.
    pub fn image_random(&self, seed: u64) -> Vec<u8> {
        let mut rng = seed;
        let mut img = self.durable.to_vec();
        for (&line, d) in self.dirty {
            let s = (line * CACHE_LINE) as usize;
            match splitmix(&mut rng) % 3 {
                0 => {}
                1 => img[s..s + LINE].copy_from_slice(&self.live[s..s + LINE]),
                _ => match &d.flushed {
                    Some(snap) => img[s..s + LINE].copy_from_slice(snap),
                    None => img[s..s + LINE].copy_from_slice(&self.live[s..s + LINE]),
                },
            }
        }
        img
    }

    /// Image where each 8-byte word of each pending line independently keeps its old content,
    /// its flushed snapshot (if any) or its newest content: lines persisted in part.
    pub fn image_torn(&self, seed: u64) -> Vec<u8> {
        let mut rng = seed;
        let mut img = self.durable.to_vec();
        for (&line, d) in self.dirty {
            let s = (line * CACHE_LINE) as usize;
            for w in (0..LINE).step_by(8) {
                let r = s + w..s + w + 8;
                match splitmix(&mut rng) % 3 {
                    0 => {}
                    1 => img[r.clone()].copy_from_slice(&self.live[r]),
                    _ => match &d.flushed {
                        Some(snap) => img[r].copy_from_slice(&snap[w..w + 8]),
                        None => img[r.clone()].copy_from_slice(&self.live[r]),
                    },
                }
            }
        }
        img
    }

    /// The checker's standard set: none, all (if anything is pending), `subsets` random subsets
    /// of lines (if more than one line is pending) and `torn` images torn at 8-byte
    /// granularity (if anything is pending), deterministic in `seed`. Returns the images and
    /// how many of them are torn (the last ones).
    pub fn images(&self, subsets: usize, torn: usize, seed: u64) -> (Vec<Vec<u8>>, usize) {
        let mut out = vec![self.image_none()];
        let draw = |i: usize| seed ^ (i as u64).wrapping_mul(0x2545_f491_4f6c_dd1d);
        if self.pending_lines() > 0 {
            out.push(self.image_all());
        }
        if self.pending_lines() > 1 {
            for i in 0..subsets {
                out.push(self.image_random(draw(i)));
            }
        }
        let mut n = 0;
        if self.pending_lines() > 0 {
            for i in 0..torn {
                out.push(self.image_torn(draw(subsets + i)));
                n += 1;
            }
        }
        (out, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex as StdMutex};

    #[test]
    fn unflushed_store_may_or_may_not_survive() {
        let pm = CrashPm::new(4096);
        pm.store(PmAddr(0), b"abc");
        let seen = Arc::new(StdMutex::new(Vec::new()));
        let s2 = seen.clone();
        pm.set_observer(Some(Box::new(move |cp| {
            s2.lock().unwrap().push((cp.image_none()[0], cp.image_all()[0]));
        })));
        pm.fence();
        assert_eq!(seen.lock().unwrap()[0], (0, b'a'));
        // Not flushed: still not durable after the fence.
        assert_eq!(pm.durable_image()[0], 0);
        assert_eq!(pm.live_image()[0], b'a');
    }

    #[test]
    fn flush_then_fence_is_durable() {
        let pm = CrashPm::new(4096);
        pm.persist(PmAddr(70), b"xyz");
        pm.fence();
        assert_eq!(&pm.durable_image()[70..73], b"xyz");
        pm.store_nt(PmAddr(200), b"nt");
        pm.fence();
        assert_eq!(&pm.durable_image()[200..202], b"nt");
    }

    #[test]
    fn store_after_flush_keeps_line_dirty_with_snapshot_durable() {
        let pm = CrashPm::new(4096);
        pm.persist(PmAddr(0), b"1");
        pm.store(PmAddr(1), b"2");
        pm.fence();
        assert_eq!(&pm.durable_image()[0..2], b"1\0");
        pm.flush(PmAddr(0), 2);
        pm.fence();
        assert_eq!(&pm.durable_image()[0..2], b"12");
    }

    #[test]
    fn torn_images_mix_old_and_new_words_within_a_line() {
        let pm = CrashPm::new(4096);
        pm.store(PmAddr(0), &[0xffu8; 64]);
        let st = pm.lock();
        let cp = CrashPoint { live: &st.live, durable: &st.durable, dirty: &st.dirty, fence_index: 0 };
        let mut mixed = false;
        for seed in 0..16 {
            let img = cp.image_torn(seed);
            for w in img[..64].chunks(8) {
                assert!(w == [0u8; 8] || w == [0xffu8; 8], "a word is never torn itself");
            }
            mixed |= img[..64].chunks(8).any(|w| w[0] == 0) && img[..64].chunks(8).any(|w| w[0] == 0xff);
        }
        assert!(mixed, "some image keeps part of the line");
    }

    proptest::proptest! {
        #[test]
        fn random_images_only_mix_old_and_new_lines(seed: u64, writes in proptest::collection::vec((0u64..4000, 1u8..255), 1..20)) {
            let pm = CrashPm::new(4096);
            for (off, v) in &writes {
                pm.store(PmAddr(*off), &[*v]);
            }
            let live = pm.live_image();
            let st = pm.lock();
            let cp = CrashPoint { live: &st.live, durable: &st.durable, dirty: &st.dirty, fence_index: 0 };
            let img = cp.image_random(seed);
            for line in 0..64u64 {
                let r = (line * 64) as usize..(line * 64 + 64) as usize;
                proptest::prop_assert!(img[r.clone()] == live[r.clone()] || img[r].iter().all(|&b| b == 0));
            }
        }
    }
}
