//! The C library's allocator, told to give large blocks back. glibc serves a block of 128 KiB
//! or more from its own mapping, but raises that threshold to the size of each such block
//! freed (up to 32 MiB): after one 20 MB file was read and dropped, the next ones came from
//! the heap arenas, one arena per thread, and stayed there. Heavy calls from 30 HTTP sessions
//! (20 MB reads and edits, searches of 32 MiB lines) kept 370 MB resident that way; with a
//! fixed threshold of 4 MiB, 172 MB (issue 35, seventh attack). Reading many small files got
//! no slower (ruff's rules folder: 38 → 34 ms).

/// Blocks this large or larger get their own mapping, returned when freed.
pub const MMAP_THRESHOLD: usize = 4 << 20;

/// Fixes glibc's mmap threshold at [`MMAP_THRESHOLD`] (a no-op elsewhere). Call it early in
/// `main`, before threads start allocating.
pub fn bound_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: mallopt only changes the allocator's tuning; M_MMAP_THRESHOLD takes a size in
    // bytes, and 4 MiB is within glibc's accepted range (at most 32 MiB on 64-bit).
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
    }
}
