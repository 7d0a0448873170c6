//! The process's allocator: mimalloc for small blocks, the system allocator for large ones.
//!
//! The simulation allocates and frees small objects (tasks, commands, unit buffers) at a high
//! rate on one thread; mimalloc serves those without glibc's consolidation passes (about 10%
//! more requests per second through `ssdlab serve`). Large blocks (a big device's flash-array
//! metadata) stay with the system allocator, whose zeroed allocations come straight from the
//! kernel and are paged in only where touched: mimalloc zeroes them eagerly, which made
//! building a 1 TiB metadata-only device several times slower and made all of it resident.

use std::alloc::{GlobalAlloc, Layout, System};

use mimalloc::MiMalloc;

/// Blocks up to this size go to mimalloc.
const SMALL: usize = 256 << 10;

/// Blocks from this size up are tables a big device indexes at random (the mapping table, the
/// array's unit table and tags): they ask for transparent huge pages, so that a random access
/// costs a cache miss but rarely a page-table walk as well.
const HUGE: usize = 64 << 20;

/// Asks for huge pages on the 2 MiB-aligned part of the block at `ptr` (advice only: nothing
/// changes if the kernel declines).
fn advise_huge(ptr: *mut u8, size: usize) {
    if ptr.is_null() || size < HUGE {
        return;
    }
    const PAGE: usize = 2 << 20;
    let start = (ptr as usize).next_multiple_of(PAGE);
    let end = (ptr as usize + size) / PAGE * PAGE;
    if end > start {
        // SAFETY: the range lies inside a block this allocator just handed out; MADV_HUGEPAGE
        // changes how the kernel backs it, never its contents.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

/// Small blocks to mimalloc, large ones to the system allocator; a block is freed by the
/// allocator its size says, which is the one that allocated it (the layout is the same).
pub struct Split;

/// The alignment mimalloc's plain `mi_malloc` guarantees for blocks at least that large (its
/// `MI_MAX_ALIGN_SIZE`), as the C library's `malloc` does: smaller alignments skip mimalloc's
/// aligned entry point, which the `mimalloc` crate uses for every block and which takes a
/// slower path (about a third of the cost of the simulation's many small allocations).
const PLAIN_ALIGN: usize = 16;

fn plain(layout: Layout) -> bool {
    layout.align() <= PLAIN_ALIGN && layout.align() <= layout.size()
}

/// A small block from mimalloc.
///
/// # Safety
/// `layout` has a non-zero size.
unsafe fn mi_alloc(layout: Layout, zeroed: bool) -> *mut u8 {
    // SAFETY: the caller's layout contract passes through; plain blocks are aligned enough.
    unsafe {
        match (plain(layout), zeroed) {
            (true, false) => libmimalloc_sys::mi_malloc(layout.size()) as *mut u8,
            (true, true) => libmimalloc_sys::mi_zalloc(layout.size()) as *mut u8,
            (false, false) => MiMalloc.alloc(layout),
            (false, true) => MiMalloc.alloc_zeroed(layout),
        }
    }
}

fn small(size: usize) -> bool {
    size <= SMALL
}

// SAFETY: every block is allocated, resized and freed by the allocator its size selects, and
// both allocators uphold the `GlobalAlloc` contract; a resize across the threshold moves the
// block (allocate, copy the common prefix, free) as `GlobalAlloc::realloc`'s default does.
unsafe impl GlobalAlloc for Split {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout contract passes through.
        unsafe {
            if small(layout.size()) {
                mi_alloc(layout, false)
            } else {
                let p = System.alloc(layout);
                advise_huge(p, layout.size());
                p
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        unsafe {
            if small(layout.size()) {
                mi_alloc(layout, true)
            } else {
                let p = System.alloc_zeroed(layout);
                advise_huge(p, layout.size());
                p
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from the allocator this layout's size selects (see above).
        unsafe {
            // mimalloc frees a block whatever its alignment, as `MiMalloc::dealloc` does.
            if small(layout.size()) {
                libmimalloc_sys::mi_free(ptr as *mut libc::c_void)
            } else {
                System.dealloc(ptr, layout)
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` belongs to the allocator `layout` selects; the caller guarantees
        // `new_size` is valid for `layout.align()`.
        unsafe {
            match (small(layout.size()), small(new_size)) {
                (true, true) if plain(layout) && new_size >= layout.align() => {
                    libmimalloc_sys::mi_realloc(ptr as *mut libc::c_void, new_size) as *mut u8
                }
                (true, true) => MiMalloc.realloc(ptr, layout, new_size),
                (false, false) => {
                    let p = System.realloc(ptr, layout, new_size);
                    advise_huge(p, new_size);
                    p
                }
                _ => {
                    let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                    let new = self.alloc(new_layout);
                    if !new.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    new
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks grow and shrink across the threshold with their contents intact, and each is
    /// freed by the allocator that holds it (a mismatch would crash the test process).
    #[test]
    fn blocks_keep_their_bytes_across_the_threshold() {
        let a = Split;
        for align in [1usize, 8, 64, 4096] {
            let layout = Layout::from_size_align(1000, align).unwrap();
            // SAFETY: layouts are non-zero in size; every pointer is used within its size and
            // freed once with its current layout.
            unsafe {
                let p = a.alloc_zeroed(layout);
                assert!(!p.is_null());
                assert!(std::slice::from_raw_parts(p, 1000).iter().all(|&b| b == 0));
                for i in 0..1000 {
                    *p.add(i) = (i % 251) as u8;
                }
                let big = SMALL * 3;
                let q = a.realloc(p, layout, big);
                assert_eq!(q as usize % align, 0);
                assert!((0..1000).all(|i| *q.add(i) == (i % 251) as u8));
                *q.add(big - 1) = 7;
                let big_layout = Layout::from_size_align(big, align).unwrap();
                let r = a.realloc(q, big_layout, 500);
                assert!((0..500).all(|i| *r.add(i) == (i % 251) as u8));
                a.dealloc(r, Layout::from_size_align(500, align).unwrap());
                let z = a.alloc_zeroed(big_layout);
                assert!(std::slice::from_raw_parts(z, big).iter().all(|&b| b == 0));
                a.dealloc(z, big_layout);
            }
        }
    }
}
