//! Classic libpcap format (draft-ietf-opsawg-pcap, "PCAP Capture File Format"): magic numbers and
//! the per-record header.

use super::error::CaptureError;

/// draft-ietf-opsawg-pcap 4: magic 0xA1B2C3D4 = microsecond timestamps.
pub(crate) const MAGIC_US: u32 = 0xA1B2_C3D4;
/// draft-ietf-opsawg-pcap 4: magic 0xA1B23C4D = nanosecond timestamps.
pub(crate) const MAGIC_NS: u32 = 0xA1B2_3C4D;
/// Alexey Kuznetzov's "modified" libpcap format (Red Hat 6.1 patches): 24-byte record headers.
pub(crate) const MAGIC_MODIFIED: u32 = 0xA1B2_CD34;
/// pcapng Section Header Block type (pcapng draft 4.1), the same in both byte orders.
pub(crate) const PCAPNG_SHB: u32 = 0x0A0D_0D0A;

/// Size of the classic file header (draft-ietf-opsawg-pcap 4).
pub(crate) const FILE_HEADER_LEN: usize = 24;
/// Records larger than this are taken as corruption: libpcap's and Wireshark's maximum snapshot
/// length (MAXIMUM_SNAPLEN / WTAP_MAX_PACKET_SIZE_STANDARD).
pub(crate) const MAX_RECORD_LEN: u32 = 262_144;

/// What the first four bytes of a capture say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Magic {
    Classic {
        big_endian: bool,
        nanos: bool,
        modified: bool,
    },
    Pcapng,
}

/// Identifies the file format from its first four bytes (`head.len() >= 4`).
pub(crate) fn sniff(head: &[u8; 4]) -> Result<Magic, CaptureError> {
    let le = u32::from_le_bytes(*head);
    let be = u32::from_be_bytes(*head);
    // The magic is written in the writer's byte order: read it both ways (draft 4).
    let classic = |big_endian, nanos, modified| {
        Ok(Magic::Classic {
            big_endian,
            nanos,
            modified,
        })
    };
    match (le, be) {
        (PCAPNG_SHB, _) => Ok(Magic::Pcapng),
        (MAGIC_US, _) => classic(false, false, false),
        (_, MAGIC_US) => classic(true, false, false),
        (MAGIC_NS, _) => classic(false, true, false),
        (_, MAGIC_NS) => classic(true, true, false),
        (MAGIC_MODIFIED, _) => classic(false, false, true),
        (_, MAGIC_MODIFIED) => Err(CaptureError::Unsupported {
            what: "big-endian 'modified' pcap format",
            magic: be,
        }),
        _ => Err(CaptureError::BadMagic { magic: be }),
    }
}

/// Length of the per-record header: 16 bytes (ts_sec, ts_frac, caplen, origlen; draft 5), or 24
/// in the modified format (plus ifindex, protocol, pkt_type, pad).
pub(crate) fn record_header_len(modified: bool) -> usize {
    if modified {
        24
    } else {
        16
    }
}

/// A record header read from the buffer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecordHead {
    pub ts_sec: u32,
    pub ts_frac: u32,
    pub caplen: u32,
    pub origlen: u32,
}

/// Reads a record header (`data` must hold at least 16 bytes).
pub(crate) fn record_head(data: &[u8], big_endian: bool) -> Option<RecordHead> {
    let u = |i: usize| -> Option<u32> {
        let b: [u8; 4] = data.get(i..i + 4)?.try_into().ok()?;
        Some(if big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    };
    Some(RecordHead {
        ts_sec: u(0)?,
        ts_frac: u(4)?,
        caplen: u(8)?,
        origlen: u(12)?,
    })
}

/// Record timestamp in ns since the epoch: seconds plus µs or ns (draft 5: unsigned fields).
pub(crate) fn ts_ns(h: &RecordHead, nanos: bool) -> i64 {
    let frac = if nanos {
        i128::from(h.ts_frac)
    } else {
        i128::from(h.ts_frac) * 1000
    };
    // u32 seconds * 1e9 + frac always fits in i64 (< 4.3e18 + 4.3e12); i128 for clarity.
    (i128::from(h.ts_sec) * 1_000_000_000 + frac) as i64
}

/// Link type from the header's LinkType field: the upper bits carry FCS information (draft 4,
/// "LinkType and additional information"), masked like libpcap's LT_LINKTYPE().
pub(crate) fn linktype(network: i32) -> u32 {
    (network as u32) & 0x03FF_FFFF
}
