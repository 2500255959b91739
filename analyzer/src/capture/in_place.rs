//! The bytes of a capture file and where they come from (`Input`): pcap-parser's buffered reader
//! over a stream (gzip, pipes, uploads), or a plain file read whole or mapped and read in place
//! (`Backing`), with prefetching ahead of the record read and the mapped pages already read
//! handed back to the kernel.

use std::io::Read;

use pcap_parser::nom;
use pcap_parser::pcapng::Block;
use pcap_parser::traits::PcapReaderIterator;
use pcap_parser::{PcapBlockOwned, PcapError};

use super::classic;
use super::pcapng;
use super::reader::describe;

/// How far ahead of the record being read the bytes read in place are prefetched.
const PREFETCH_AHEAD: usize = 256;

/// Plain files up to this size are read whole into memory and then in place: one copy costs less
/// than mapping them (page faults, and unmapping interrupts the other threads of the process to
/// flush their TLBs: with 2 workers over 200 one-megabyte captures, 20% more CPU than 1 worker),
/// and far less than pcap-parser's buffered stream (half the speed). Larger files are mapped.
pub(super) const READ_WHOLE_MAX: u64 = 4 << 20;

thread_local! {
    /// The buffer of the last small capture read whole on this thread, for the next one: a batch
    /// worker reads one capture after another, and reusing the buffer spares the kernel zeroing
    /// fresh pages for each.
    pub(super) static SPARE: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// How a capture file is read (`CaptureReader::source`).
pub(super) enum Source {
    InPlace(Backing),
    Stream(Box<dyn Read + Send>),
}

/// The bytes of a capture read in place.
pub(super) enum Backing {
    /// A read-only mapping of the file.
    Mapped(memmap2::Mmap),
    /// The whole (small) file.
    Owned(Vec<u8>),
}

impl Drop for Backing {
    fn drop(&mut self) {
        if let Backing::Owned(v) = self {
            // A file that grew while it was read may have left a larger buffer: not kept.
            if v.capacity() as u64 <= 2 * READ_WHOLE_MAX {
                SPARE.set(std::mem::take(v));
            }
        }
    }
}

impl std::ops::Deref for Backing {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        match self {
            Backing::Mapped(m) => m,
            Backing::Owned(v) => v,
        }
    }
}

/// Where the capture bytes come from: pcap-parser's buffered reader over a stream (gzip, pipes,
/// uploads), or the bytes of a plain file read in place (`Backing`).
pub(super) enum Input {
    Stream(Box<dyn PcapReaderIterator + Send>),
    InPlace {
        bytes: Backing,
        pos: usize,
        /// Bytes before this were handed back to the kernel (`RELEASE_STEP`).
        released: usize,
    },
}

/// The mapped pages already read are dropped from the process every this many bytes (a power of
/// two): they stay in the page cache but no longer count in the resident set. Each drop unmaps
/// pages, so the kernel flushes the TLB of every CPU running one of our threads (an IPI): on a
/// 2-vCPU VM whose vCPUs the host preempts, one such flush measured ~1 ms (perf: 15% of the
/// reading thread's samples on the 1 GB SCTP capture with 1 MiB steps). 4 MiB steps make a
/// quarter of the flushes for 3 MiB more resident at most.
const RELEASE_STEP: usize = 4 << 20;

impl Input {
    /// The bytes not consumed yet that are available now.
    #[inline]
    pub(super) fn data(&self) -> &[u8] {
        match self {
            Input::Stream(r) => r.data(),
            Input::InPlace { bytes, pos, .. } => &bytes[*pos..],
        }
    }

    #[inline]
    pub(super) fn consume(&mut self, n: usize) {
        match self {
            Input::Stream(r) => r.consume(n),
            Input::InPlace {
                bytes,
                pos,
                released,
            } => {
                *pos = (*pos + n).min(bytes.len());
                #[cfg(target_arch = "x86_64")]
                if let Some(b) = bytes.get(*pos + PREFETCH_AHEAD) {
                    // SAFETY: a prefetch hint on an address inside the bytes read in place.
                    unsafe {
                        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                            b as *const u8 as *const i8,
                        )
                    };
                }
                match bytes {
                    Backing::Mapped(m) if *pos - *released >= RELEASE_STEP => {
                        // Page-aligned, as madvise needs (the map itself starts on a page).
                        let upto = *pos & !(RELEASE_STEP - 1);
                        // SAFETY: MADV_DONTNEED on a read-only file mapping only drops the pages
                        // from this process (a later access faults them in again from the file).
                        // Nothing borrows bytes before `pos`: a frame's borrow ends before the
                        // next call consumes it.
                        let _ = unsafe {
                            m.unchecked_advise_range(
                                memmap2::UncheckedAdvice::DontNeed,
                                *released,
                                upto - *released,
                            )
                        };
                        *released = upto;
                    }
                    _ => {}
                }
            }
        }
    }

    /// No more bytes will come beyond `data()`.
    pub(super) fn reader_exhausted(&self) -> bool {
        match self {
            Input::Stream(r) => r.reader_exhausted(),
            Input::InPlace { .. } => true,
        }
    }

    pub(super) fn refill(&mut self) -> Result<(), ()> {
        match self {
            Input::Stream(r) => r.refill().map_err(|_| ()),
            Input::InPlace { .. } => Ok(()),
        }
    }

    pub(super) fn grow(&mut self, capacity: usize) {
        if let Input::Stream(r) = self {
            r.grow(capacity);
        }
    }

    /// The classic pcap file header at the start of `data()`, consumed: (its length, link type,
    /// snap length), or why it could not be parsed.
    pub(super) fn classic_header(&mut self) -> Result<(usize, u32, u32), String> {
        let parsed = match self {
            // pcap-parser's reader returns the file header as the first block.
            Input::Stream(r) => match r.next() {
                Ok((n, PcapBlockOwned::LegacyHeader(h))) => {
                    Ok((n, classic::linktype(h.network.0), h.snaplen))
                }
                Ok(_) => Err(describe(&PcapError::HeaderNotRecognized)),
                Err(e) => Err(describe(&e)),
            },
            Input::InPlace { bytes, pos, .. } => {
                let data = &bytes[*pos..];
                match pcap_parser::parse_pcap_header(data) {
                    Ok((rest, h)) => Ok((
                        data.len() - rest.len(),
                        classic::linktype(h.network.0),
                        h.snaplen,
                    )),
                    Err(nom::Err::Error(e) | nom::Err::Failure(e)) => Err(describe(&e)),
                    Err(nom::Err::Incomplete(_)) => Err("incomplete file header".into()),
                }
            }
        }?;
        self.consume(parsed.0);
        Ok(parsed)
    }

    /// The pcapng SHB or IDB at the start of `data()` (not consumed), parsed by pcap-parser in
    /// the section's byte order (an SHB carries its own). None for another kind of block.
    pub(super) fn header_block(&mut self, big_endian: bool) -> Result<Option<Block<'_>>, String> {
        match self {
            Input::Stream(r) => match r.next() {
                Ok((_, PcapBlockOwned::NG(b))) => Ok(Some(b)),
                Ok(_) => Ok(None),
                Err(e) => Err(describe(&e)),
            },
            Input::InPlace { bytes, pos, .. } => {
                let data = &bytes[*pos..];
                let parsed = if data.get(..4) == Some(&pcapng::SHB.to_le_bytes()[..]) {
                    pcap_parser::pcapng::parse_sectionheaderblock(data)
                        .map(|(_, shb)| Block::SectionHeader(shb))
                } else if big_endian {
                    pcap_parser::pcapng::parse_block_be(data).map(|(_, b)| b)
                } else {
                    pcap_parser::pcapng::parse_block_le(data).map(|(_, b)| b)
                };
                match parsed {
                    Ok(b) => Ok(Some(b)),
                    Err(nom::Err::Error(e) | nom::Err::Failure(e)) => Err(describe(&e)),
                    Err(nom::Err::Incomplete(_)) => Err("incomplete block".into()),
                }
            }
        }
    }
}
