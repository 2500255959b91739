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
    /// Endace ERF: no magic, told by its first records (`erf::looks_like`), never by `sniff`.
    Erf,
}

impl Magic {
    /// The capture format this magic names.
    pub(crate) fn format(self) -> super::CaptureFormat {
        match self {
            Magic::Classic { .. } => super::CaptureFormat::Pcap,
            Magic::Pcapng => super::CaptureFormat::Pcapng,
            Magic::Erf => super::CaptureFormat::Erf,
        }
    }
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

/// Record header lengths of old tcpdump variants that kept a standard or "modified" magic
/// (Wireshark's wiretap reads them by trying each): Nokia IPSO's 20 bytes (4 bytes more), Red
/// Hat 6.1's 24 (the modified layout under the standard magic) and SuSE 6.3's 28 (modified
/// magic: ifindex, protocol, pkt_type, cpu1, cpu2, pad).
const VARIANTS: [(bool, usize, &str); 3] = [
    (false, 20, "Nokia IPSO tcpdump"),
    (false, 24, "Red Hat 6.1 tcpdump"),
    (true, 28, "SuSE 6.3 tcpdump"),
];

/// Records a variant's header length must fit in a row (or all records, when the file ends at a
/// record boundary sooner) for it to be taken.
const VARIANT_RECORDS: usize = 4;

/// The record header length of a classic capture whose file header (and what follows of it)
/// is `bytes`: the format's own (`record_header_len`) unless its first two records do not fit
/// while one old variant's do, record after record (`VARIANTS`); then that variant's name too.
pub(crate) fn variant_record_header_len(
    bytes: &[u8],
    big_endian: bool,
    nanos: bool,
    modified: bool,
) -> (usize, Option<&'static str>) {
    let own = record_header_len(modified);
    if fits(bytes, own, big_endian, nanos, 2) {
        return (own, None);
    }
    VARIANTS
        .iter()
        .find(|&&(m, hdr, _)| m == modified && fits(bytes, hdr, big_endian, nanos, VARIANT_RECORDS))
        .map_or((own, None), |&(_, hdr, name)| (hdr, Some(name)))
}

/// Whether `want` records (or every record up to the end of `bytes`, at a record boundary) read
/// as plausible with `hdr`-byte record headers: a captured length within the record limit and
/// not above the original length, a fraction below one second, times that do not step back by
/// more than a day. A record cut by the end of `bytes` counts as fitting.
fn fits(bytes: &[u8], hdr: usize, big_endian: bool, nanos: bool, want: usize) -> bool {
    let one_second = if nanos { 1_000_000_000 } else { 1_000_000 };
    let mut pos = FILE_HEADER_LEN;
    let mut last_sec: Option<u32> = None;
    for _ in 0..want {
        if pos == bytes.len() {
            return true;
        }
        let Some(h) = bytes
            .get(pos..pos + 16)
            .and_then(|d| record_head(d, big_endian))
        else {
            return true;
        };
        if h.caplen > MAX_RECORD_LEN
            || h.origlen > MAX_RECORD_LEN.max(65_535)
            || h.caplen > h.origlen
            || h.ts_frac >= one_second
            || last_sec.is_some_and(|l| h.ts_sec.saturating_add(86_400) < l)
        {
            return false;
        }
        last_sec = Some(h.ts_sec);
        pos += hdr + h.caplen as usize;
        if pos > bytes.len() {
            return true;
        }
    }
    true
}

/// A little-endian nanosecond file header (draft-ietf-opsawg-pcap 4: version 2.4, snap length
/// 65535) for frames of `linktype`.
pub(crate) fn file_header(linktype: u32) -> Vec<u8> {
    let mut h = Vec::with_capacity(FILE_HEADER_LEN);
    h.extend_from_slice(&MAGIC_NS.to_le_bytes());
    h.extend_from_slice(&2u16.to_le_bytes());
    h.extend_from_slice(&4u16.to_le_bytes());
    h.extend_from_slice(&[0; 8]);
    h.extend_from_slice(&u32::from(u16::MAX).to_le_bytes());
    h.extend_from_slice(&linktype.to_le_bytes());
    h
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

#[cfg(test)]
mod variant_tests {
    use super::*;

    /// A little-endian µs file header and `n` records of `caplen` bytes, each record header
    /// followed by `extra` bytes (an old variant's longer header).
    fn file(n: u32, caplen: u32, extra: usize) -> Vec<u8> {
        let mut v = MAGIC_US.to_le_bytes().to_vec();
        v.extend_from_slice(&[
            2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 1, 0, 0, 0,
        ]);
        for i in 0..n {
            for f in [1_700_000_000 + i, 1000 * i, caplen, caplen] {
                v.extend_from_slice(&f.to_le_bytes());
            }
            v.extend(std::iter::repeat_n(0xEE, extra));
            v.extend(std::iter::repeat_n(0x45, caplen as usize));
        }
        v
    }

    #[test]
    fn the_record_header_length_is_told_from_the_first_records() {
        assert_eq!(
            variant_record_header_len(&file(5, 100, 0), false, false, false),
            (16, None)
        );
        assert_eq!(
            variant_record_header_len(&file(5, 100, 4), false, false, false),
            (20, Some("Nokia IPSO tcpdump"))
        );
        assert_eq!(
            variant_record_header_len(&file(5, 100, 8), false, false, false),
            (24, Some("Red Hat 6.1 tcpdump"))
        );
        // The modified magic's own 24 bytes, and SuSE 6.3's 28.
        assert_eq!(
            variant_record_header_len(&file(5, 100, 8), false, false, true),
            (24, None)
        );
        assert_eq!(
            variant_record_header_len(&file(5, 100, 12), false, false, true),
            (28, Some("SuSE 6.3 tcpdump"))
        );
        // One record, or a file whose records fit nothing: the format's own length.
        assert_eq!(
            variant_record_header_len(&file(1, 100, 4), false, false, false),
            (16, None)
        );
        let mut bad = file(5, 100, 0);
        bad[24 + 16 + 100 + 8..24 + 16 + 100 + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(
            variant_record_header_len(&bad, false, false, false),
            (16, None)
        );
    }
}
