//! The CLI's allocator: mimalloc, tuned to give freed memory back within a millisecond and to use
//! no transparent huge pages.
//!
//! The pass builds associations and connections on the analysing thread and frees them on the
//! emitting one; mimalloc is markedly faster at that than the system allocator (1 GB SCTP
//! capture: 17% less time). Each return of freed pages to the OS is a TLB shootdown (an IPI to
//! the other vCPU, ~1 ms when the host has preempted it): returned at once, ~640 on the 1 GB SCTP
//! capture; after 1 ms, ~240, with the same peak on the 1,000,000-tag hostile capture (330 MB).
//! Longer delays let that peak grow (30 ms and more: 400 MB; an earlier build with mimalloc's
//! default of 10 ms varied 210-320 MB run to run). Captures analysed in parallel keep mimalloc's
//! delay: returning pages at once there unmaps them under the other workers and cost a quarter
//! of the batch speed-up (200 captures, 2 workers: 1.46x instead of 1.74x over one).

/// The global allocator of a binary that wants it (`#[global_allocator]`).
pub use mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc.h (v2 and v3: the 16th option; libmimalloc-sys names no
/// constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
/// Freed memory of a single-capture pass goes back to the OS after this many ms (see the module).
const SINGLE_PURGE_DELAY_MS: std::ffi::c_long = 1;

/// Transparent huge pages off for the process: mimalloc v3 asks for them on its arenas
/// (`allow_thp`, read before `main`, hence the kernel switch), and a page fault then zeroes
/// 2 MiB, again each time memory is returned and taken back. On a batch of 200 small captures
/// with `--jobs 2` that zeroing was 12.5% of the time (`clear_page_erms`). A `MIMALLOC_ALLOW_THP`
/// set by the user wins.
///
/// For one capture (`batch` false), freed memory is returned to the OS after
/// `SINGLE_PURGE_DELAY_MS`; a batch of several keeps mimalloc's delay. A `MIMALLOC_PURGE_DELAY`
/// set by the user wins.
pub fn tune(batch: bool) {
    #[cfg(target_os = "linux")]
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_none() {
        // SAFETY: PR_SET_THP_DISABLE takes plain integers and only sets a flag of this process
        // (prctl(2)); its result is not needed (THP stays as it was if it fails).
        let _ = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
    }
    if batch || std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: setting a documented option to a documented value (a delay in ms); mimalloc
    // reads options atomically.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, SINGLE_PURGE_DELAY_MS) };
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_purge_delay_option_is_the_one_set() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        super::tune(false);
        // SAFETY: reading an option.
        let v = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        assert_eq!(v, super::SINGLE_PURGE_DELAY_MS);
        // Its neighbours keep their defaults (the index names the right option).
        // SAFETY: reading options.
        let numa = unsafe { libmimalloc_sys::mi_option_get(16) };
        assert_eq!(numa, 0, "mi_option_use_numa_nodes default");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn transparent_huge_pages_are_off() {
        if std::env::var_os("MIMALLOC_ALLOW_THP").is_some() {
            return;
        }
        super::tune(true);
        // SAFETY: PR_GET_THP_DISABLE takes no pointer.
        let off = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
        assert_eq!(off, 1);
    }
}
