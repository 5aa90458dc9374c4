//! The C allocator's threshold for large blocks, raised once when the module loads.
//!
//! glibc serves a block of 128 KiB or more with its own `mmap` and gives it back to the system
//! when it is freed, so every large buffer of a call (a response's canonical JSON, the `bytes`
//! made of it, its text) is new memory whose every page faults on first touch, at about 1.5-2 us a
//! page on a VM. glibc raises that threshold to the size of a freed mapped block by itself
//! (its dynamic threshold), and its trim threshold to twice that, but only once such a block has
//! been freed, and only where the heap's layout leaves the freed memory at its top: a process that
//! has not yet freed one pays the faults on every large call (about 420 a call, 0.6 ms of 2.2 ms,
//! for a 0.93 MB Chat Completions body read in a process with the openai SDK imported). One block
//! of `SETTLE` bytes mapped and freed at once (never touched: no page is faulted) moves both
//! thresholds up front: buffers up to 4 MiB then come from the heap and stay in it, and at most
//! about 8 MiB of freed memory is kept for reuse. Other allocators take it as a plain allocation.

/// The size of the block: the largest buffer that is then kept off `mmap`.
const SETTLE: usize = 4 << 20;

pub(crate) fn settle() {
    // black_box: an allocation never used may be removed by the optimizer
    drop(std::hint::black_box(Vec::<u8>::with_capacity(SETTLE)));
}
