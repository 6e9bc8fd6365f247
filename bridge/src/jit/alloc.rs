//! The allocator of compiled code. A compiled function allocates its intermediate
//! arrays (a padded copy, a separable filter's first pass) and its promoted tiles
//! (`memref.alloc`) on every call. Through the C library each large array is fresh
//! memory from the kernel on every call when the heap is trimmed after the last one
//! was freed (a 2048 x 2048 blur measured 5x slower in one process than in another),
//! and each small tile is a `malloc` and a `free` inside the loops. Here blocks freed
//! are kept, per thread, and handed out again for the same size: a function called
//! again finds its arrays where it left them.
//!
//! The lowering calls these through MLIR's generic allocation functions
//! (`finalize-memref-to-llvm{use-generic-functions=true}`), registered with each
//! engine ([`SYMBOLS`]).

use std::alloc::Layout;
use std::cell::RefCell;

/// Bytes before each block: its layout (size, then the header's own size), keeping
/// the block aligned to 64 bytes (or to the alignment asked for, if more).
const HEADER: usize = 64;

/// At most this many blocks, and this many bytes, are kept per thread (the oldest
/// released first).
const KEPT_BLOCKS: usize = 64;
const KEPT_BYTES: usize = 1 << 30;

/// Blocks freed on this thread, ready for the same size: `(size, header, block)`.
struct Kept {
    blocks: Vec<(usize, usize, *mut u8)>,
    bytes: usize,
}

impl Drop for Kept {
    fn drop(&mut self) {
        for (size, header, block) in self.blocks.drain(..) {
            // SAFETY: each kept block came from `allocate` with this size and header.
            unsafe { release(block, size, header) }
        }
    }
}

thread_local! {
    static KEPT: RefCell<Kept> = const { RefCell::new(Kept { blocks: Vec::new(), bytes: 0 }) };
}

/// The layout of a block of `size` bytes behind a header of `header` bytes.
fn layout(size: usize, header: usize) -> Option<Layout> {
    Layout::from_size_align(size.checked_add(header)?, header).ok()
}

/// A block of `size` bytes aligned to `align` (a power of two), or null where the
/// memory is not there.
fn allocate(size: usize, align: usize) -> *mut u8 {
    let header = align.max(HEADER);
    let kept = KEPT.try_with(|k| {
        let mut k = k.borrow_mut();
        let at = k
            .blocks
            .iter()
            .position(|(s, h, _)| *s == size && *h == header)?;
        let (_, _, block) = k.blocks.swap_remove(at);
        k.bytes -= size;
        Some(block)
    });
    if let Ok(Some(block)) = kept {
        return block;
    }
    let Some(layout) = layout(size, header) else {
        return std::ptr::null_mut();
    };
    // SAFETY: the layout has a non-zero size (the header).
    let base = unsafe { std::alloc::alloc(layout) };
    if base.is_null() {
        return base;
    }
    // SAFETY: the header lies within the allocation, and its last 16 bytes are
    // 8-aligned (the header is at least 64 bytes, aligned as the block is).
    unsafe {
        let block = base.add(header);
        block.cast::<usize>().sub(2).write(size);
        block.cast::<usize>().sub(1).write(header);
        block
    }
}

/// Frees a block of `allocate`'s for good.
///
/// # Safety
///
/// `block` came from `allocate` with `size` and `header`, and is not used again.
unsafe fn release(block: *mut u8, size: usize, header: usize) {
    if let Some(layout) = layout(size, header) {
        // SAFETY: as the caller promises, `block - header` is the allocation.
        unsafe { std::alloc::dealloc(block.sub(header), layout) }
    }
}

/// Returns a block to this thread's blocks, or to the system where they are full.
///
/// # Safety
///
/// `block` came from `allocate` (on any thread) and is not used again.
unsafe fn free(block: *mut u8) {
    if block.is_null() {
        return;
    }
    // SAFETY: `allocate` wrote the size and the header before the block.
    let (size, header) = unsafe {
        (
            block.cast::<usize>().sub(2).read(),
            block.cast::<usize>().sub(1).read(),
        )
    };
    if size > KEPT_BYTES {
        // SAFETY: as the caller promises.
        return unsafe { release(block, size, header) };
    }
    // The oldest blocks make room: a function called again frees what it will ask
    // for next, while what an earlier function left is the least likely to be asked
    // for.
    let kept = KEPT.try_with(|k| {
        let mut k = k.borrow_mut();
        while k.blocks.len() >= KEPT_BLOCKS || k.bytes + size > KEPT_BYTES {
            let (s, h, b) = k.blocks.remove(0);
            k.bytes -= s;
            // SAFETY: a kept block came from `allocate` with this size and header.
            unsafe { release(b, s, h) }
        }
        k.blocks.push((size, header, block));
        k.bytes += size;
    });
    if kept.is_err() {
        // The thread is exiting: its blocks are gone already.
        // SAFETY: as the caller promises.
        unsafe { release(block, size, header) }
    }
}

extern "C" fn generic_alloc(size: usize) -> *mut u8 {
    allocate(size, HEADER)
}

extern "C" fn generic_aligned_alloc(align: usize, size: usize) -> *mut u8 {
    match align.is_power_of_two() {
        true => allocate(size, align),
        false => std::ptr::null_mut(),
    }
}

extern "C" fn generic_free(block: *mut u8) {
    // SAFETY: compiled code frees what it allocated through these functions, once.
    unsafe { free(block) }
}

/// The generic allocation functions of MLIR's lowering, by name, with their
/// addresses.
pub(super) const SYMBOLS: [(&str, *mut ()); 3] = [
    ("_mlir_memref_to_llvm_alloc", generic_alloc as *mut ()),
    (
        "_mlir_memref_to_llvm_aligned_alloc",
        generic_aligned_alloc as *mut (),
    ),
    ("_mlir_memref_to_llvm_free", generic_free as *mut ()),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_kept_and_handed_out_again_for_their_size() {
        let a = generic_alloc(1000);
        assert_eq!(a as usize % 64, 0);
        // SAFETY: the block has 1000 bytes.
        unsafe { a.write_bytes(7, 1000) };
        generic_free(a);
        assert_eq!(generic_alloc(1000), a, "the same size reuses the block");
        let b = generic_alloc(2000);
        assert_ne!(a, b);
        let c = generic_aligned_alloc(4096, 10);
        assert_eq!(c as usize % 4096, 0);
        assert!(generic_aligned_alloc(48, 10).is_null());
        for p in [a, b, c] {
            generic_free(p);
        }
        generic_free(std::ptr::null_mut());
        // More than a thread keeps: the oldest go back to the system, the newest stay.
        let many: Vec<*mut u8> = (0..2 * KEPT_BLOCKS)
            .map(|i| generic_alloc(64 + i))
            .collect();
        for p in &many {
            generic_free(*p);
        }
        assert_eq!(KEPT.with(|k| k.borrow().blocks.len()), KEPT_BLOCKS);
        let newest = generic_alloc(64 + 2 * KEPT_BLOCKS - 1);
        assert_eq!(newest, many[2 * KEPT_BLOCKS - 1]);
        generic_free(newest);
        // Sizes that overflow are null, not a crash.
        assert!(generic_alloc(usize::MAX - 8).is_null());
    }
}
