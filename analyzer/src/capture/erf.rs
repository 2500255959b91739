//! Endace ERF (Extensible Record Format), what DAG capture cards and Endace probes write: the
//! record header, the record types read as frames, and telling an ERF file by its first records
//! (the format has no magic number).
//!
//! Record (Endace "ERF Types Reference Guide"; Wireshark's `wiretap/erf.c` reads it the same):
//! a 16-byte header — timestamp (8 bytes little-endian, 32.32 fixed-point seconds), type (bit 7:
//! extension headers follow), flags (bits 0-1 interface, 3 truncated, 4 receive error, 5 internal
//! data-stream error), record length `rlen` (big-endian, header included), loss counter or color
//! `lctr`, wire length `wlen` — then 8-byte extension headers (bit 7 of each one's first byte:
//! another follows), a type's sub-header (Ethernet types: 2 bytes of offset and pad), and the
//! captured bytes, padded to `rlen`.

use crate::linktype::{self as link, LINKTYPE_ERF};

/// Length of the record header.
pub(crate) const HEADER_LEN: usize = 16;
/// Length of an extension header.
const EXT_LEN: usize = 8;
/// Records checked before a file is taken as ERF, and the fewest that must be whole unless the
/// file ends at a record boundary before (Wireshark: RECORDS_FOR_ERF_CHECK,
/// MIN_RECORDS_FOR_ERF_CHECK).
const RECORDS_CHECKED: usize = 20;
const MIN_RECORDS_CHECKED: usize = 3;

/// Record types (ERF Types Reference Guide; Wireshark `erf_record.h`).
pub(crate) mod types {
    pub const HDLC_POS: u8 = 1;
    pub const ETH: u8 = 2;
    pub const COLOR_HDLC_POS: u8 = 10;
    pub const COLOR_ETH: u8 = 11;
    pub const DSM_COLOR_HDLC_POS: u8 = 15;
    pub const DSM_COLOR_ETH: u8 = 16;
    pub const COLOR_HASH_POS: u8 = 19;
    pub const COLOR_HASH_ETH: u8 = 20;
    pub const IPV4: u8 = 22;
    pub const IPV6: u8 = 23;
    pub const META: u8 = 27;
    pub const PAD: u8 = 48;
}

/// Flag bits of the header.
const FLAG_TRUNCATED: u8 = 0x08;
const FLAG_RX_ERROR: u8 = 0x10;
const FLAG_DS_ERROR: u8 = 0x20;

/// A record header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Head {
    /// 32.32 fixed-point seconds since the Unix epoch.
    pub ts: u64,
    /// The type byte (bit 7: extension headers follow).
    pub rtype: u8,
    pub flags: u8,
    /// Record length, header included.
    pub rlen: usize,
    /// Loss counter (types without color) or color.
    pub lctr: u16,
    /// Length on the wire.
    pub wlen: u16,
}

impl Head {
    /// The record type without the extension bit.
    pub fn kind(&self) -> u8 {
        self.rtype & 0x7F
    }
}

/// The header at the start of `b`, if 16 bytes are there.
#[inline]
pub(crate) fn head(b: &[u8]) -> Option<Head> {
    let b: &[u8; HEADER_LEN] = b.get(..HEADER_LEN)?.try_into().ok()?;
    let be16 = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
    Some(Head {
        ts: u64::from_le_bytes(b[..8].try_into().ok()?),
        rtype: b[8],
        flags: b[9],
        rlen: usize::from(be16(10)),
        lctr: be16(12),
        wlen: be16(14),
    })
}

/// An ERF timestamp in nanoseconds since the epoch: the binary fraction rounded to the nearest
/// nanosecond, as Wireshark rounds it.
pub(crate) fn ts_ns(ts: u64) -> i64 {
    let secs = (ts >> 32) as i64;
    let frac = u128::from(ts & 0xFFFF_FFFF) * 1_000_000_000;
    let ns = ((frac + (1 << 31)) >> 32) as i64;
    secs * 1_000_000_000 + ns
}

/// The link type of a record type's frames, and the length of its sub-header; None for types
/// that carry nothing decoded here.
fn link_of(kind: u8) -> Option<(u32, usize)> {
    use types::*;
    match kind {
        ETH | COLOR_ETH | DSM_COLOR_ETH | COLOR_HASH_ETH => Some((link::LINKTYPE_ETHERNET, 2)),
        // Packet over SONET: PPP in HDLC-like framing or Cisco HDLC, told apart by the decoder.
        HDLC_POS | COLOR_HDLC_POS | DSM_COLOR_HDLC_POS | COLOR_HASH_POS => {
            Some((link::LINKTYPE_PPP_HDLC, 0))
        }
        IPV4 => Some((link::LINKTYPE_IPV4, 0)),
        IPV6 => Some((link::LINKTYPE_IPV6, 0)),
        _ => None,
    }
}

/// Whether a type's `lctr` is a loss counter (the types with a color variant use the field for
/// the color instead).
fn counts_losses(kind: u8) -> bool {
    matches!(
        kind,
        types::HDLC_POS | types::ETH | types::IPV4 | types::IPV6
    )
}

/// Where a record's frame is: start within the record, captured length, link type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameAt {
    pub start: usize,
    pub caplen: usize,
    pub linktype: u32,
}

/// The frame of a whole record `rec` (`rec.len() == h.rlen`), past its extension headers and
/// sub-header; the captured length is what the record holds, at most the wire length (the rest
/// is padding). Err: why the record is malformed.
pub(crate) fn frame(rec: &[u8], h: &Head) -> Result<FrameAt, String> {
    let mut at = HEADER_LEN;
    let mut more = h.rtype & 0x80 != 0;
    while more {
        let Some(ext) = rec.get(at..at + EXT_LEN) else {
            return Err(format!(
                "its extension headers run past its length {}",
                h.rlen
            ));
        };
        more = ext[0] & 0x80 != 0;
        at += EXT_LEN;
    }
    let Some((linktype, sub)) = link_of(h.kind()) else {
        // Not decoded: the whole record is the frame (as Wireshark shows it).
        return Ok(FrameAt {
            start: 0,
            caplen: rec.len(),
            linktype: LINKTYPE_ERF,
        });
    };
    if at + sub > rec.len() {
        return Err(format!(
            "its type {} sub-header runs past its length {}",
            h.kind(),
            h.rlen
        ));
    }
    let start = at + sub;
    let caplen = (rec.len() - start).min(usize::from(h.wlen));
    Ok(FrameAt {
        start,
        caplen,
        linktype,
    })
}

/// Whether `bytes`, the start of a file that has no pcap or pcapng magic, reads as ERF records:
/// the first records (up to 20) have a known type, a length that holds their header, extension
/// headers and sub-header, and timestamps that do not go back more than a second nor jump ahead
/// more than a year (Wireshark's test); at least three are whole unless the file (`eof`: `bytes`
/// is all of it) ends after fewer; and one record is not padding.
pub(crate) fn looks_like(bytes: &[u8], eof: bool) -> bool {
    let mut at = 0;
    let mut prev: Option<u64> = None;
    let mut records = 0;
    let mut content = false;
    while records < RECORDS_CHECKED {
        let rest = &bytes[at..];
        if rest.is_empty() && eof {
            break;
        }
        let Some(h) = head(rest) else {
            // Cut short: enough records were whole, or the file is not ERF.
            return records >= MIN_RECORDS_CHECKED && content;
        };
        let kind = h.kind();
        if h.rlen < HEADER_LEN || kind == 0 || kind > types::PAD {
            return false;
        }
        if kind != types::PAD {
            if let Some(p) = prev {
                if h.ts < p && (p - h.ts) >> 32 > 1 {
                    return false;
                }
                if h.ts > p && (h.ts - p) >> 32 > 3600 * 24 * 365 {
                    return false;
                }
            }
            prev = Some(h.ts);
        }
        let Some(rec) = rest.get(..h.rlen) else {
            return records >= MIN_RECORDS_CHECKED && content;
        };
        if frame(rec, &h).is_err() {
            return false;
        }
        content |= kind != types::PAD;
        records += 1;
        at += h.rlen;
    }
    records > 0 && content
}

/// What an ERF capture's records said beyond their frames, told once when reading ends.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tally {
    /// Packets the card lost before the records that carry a loss counter.
    pub lost: u64,
    /// Records marked truncated (the card's buffer was full), with a receive error (a frame
    /// error on the link, e.g. a bad FCS), or with an internal data-stream error.
    pub truncated: u64,
    pub rx_error: u64,
    pub ds_error: u64,
    /// Records of types not decoded here, by type (frames without IP).
    pub other_types: Vec<(u8, u64)>,
}

impl Tally {
    /// Counts one record's header.
    #[inline]
    pub fn record(&mut self, h: &Head) {
        let kind = h.kind();
        if counts_losses(kind) {
            self.lost += u64::from(h.lctr);
        }
        if h.flags & (FLAG_TRUNCATED | FLAG_RX_ERROR | FLAG_DS_ERROR) != 0 {
            self.truncated += u64::from(h.flags & FLAG_TRUNCATED != 0);
            self.rx_error += u64::from(h.flags & FLAG_RX_ERROR != 0);
            self.ds_error += u64::from(h.flags & FLAG_DS_ERROR != 0);
        }
        // Padding records are neither frames nor worth a word.
        if kind != types::PAD && link_of(kind).is_none() {
            match self.other_types.iter_mut().find(|(t, _)| *t == kind) {
                Some((_, n)) => *n += 1,
                None => self.other_types.push((kind, 1)),
            }
        }
    }

    /// The warnings the tally gives (none for a clean capture of decoded types).
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.lost > 0 {
            out.push(format!(
                "the capture card lost {} packets (the ERF records' loss counters): the capture misses packets the network carried, so a gap in it is not necessarily a network loss",
                self.lost
            ));
        }
        let flagged = [
            (
                self.truncated,
                "truncated by the card (its buffer was full)",
            ),
            (
                self.rx_error,
                "marked with a receive error on the link (e.g. a bad FCS)",
            ),
            (
                self.ds_error,
                "marked with an internal data-stream error of the card",
            ),
        ];
        for (n, what) in flagged {
            if n > 0 {
                out.push(format!("{n} ERF records are {what}"));
            }
        }
        if !self.other_types.is_empty() {
            let list: Vec<String> = self
                .other_types
                .iter()
                .map(|&(t, n)| format!("{n} of type {t} ({})", type_name(t)))
                .collect();
            out.push(format!(
                "ERF records of types this analyzer does not decode are counted as frames without IP: {}",
                list.join(", ")
            ));
        }
        out
    }
}

/// A record type's name (ERF Types Reference Guide).
fn type_name(kind: u8) -> &'static str {
    match kind {
        3 => "ATM",
        4 => "AAL5",
        5 => "multi-channel HDLC",
        6 => "multi-channel raw",
        7 => "multi-channel ATM",
        8 => "multi-channel raw channel",
        9 => "multi-channel AAL5",
        12 => "multi-channel AAL2",
        13 => "IP counter",
        14 => "TCP flow counter",
        17 => "color multi-channel HDLC",
        18 => "AAL2",
        21 => "InfiniBand",
        24 => "raw link",
        25 => "InfiniBand link",
        types::META => "provenance metadata",
        28 => "Omni-Path SnC",
        29 => "Omni-Path 9B",
        32..=47 => "internal",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One record: header, `ext` extension headers, then `body` (sub-header and frame), padded
    /// to 8 bytes.
    pub(crate) fn record(
        ts: u64,
        kind: u8,
        ext: usize,
        body: &[u8],
        wlen: u16,
        lctr: u16,
    ) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&ts.to_le_bytes());
        r.push(kind | if ext > 0 { 0x80 } else { 0 });
        r.push(0x04);
        let len = (HEADER_LEN + ext * EXT_LEN + body.len()).div_ceil(8) * 8;
        r.extend_from_slice(&(len as u16).to_be_bytes());
        r.extend_from_slice(&lctr.to_be_bytes());
        r.extend_from_slice(&wlen.to_be_bytes());
        for i in 0..ext {
            let more = if i + 1 < ext { 0x80 } else { 0 };
            r.extend_from_slice(&[more | 17, 0, 0, 0, 0, 0, 0, 1]);
        }
        r.extend_from_slice(body);
        r.resize(len, 0);
        r
    }

    #[test]
    fn timestamps_round_to_the_nearest_nanosecond() {
        assert_eq!(ts_ns(5 << 32), 5_000_000_000);
        // Half a second.
        assert_eq!(ts_ns((5 << 32) | 0x8000_0000), 5_500_000_000);
        // 2^-32 s = 0.23 ns rounds to 0; 3 * 2^-32 s = 0.70 ns rounds to 1.
        assert_eq!(ts_ns((1 << 32) | 1), 1_000_000_000);
        assert_eq!(ts_ns((1 << 32) | 3), 1_000_000_001);
        // The largest fraction rounds up into the next second.
        assert_eq!(ts_ns((1 << 32) | 0xFFFF_FFFF), 2_000_000_000);
    }

    #[test]
    fn ethernet_frames_start_after_extension_headers_and_the_pad() {
        // A 60-byte frame and its 4-byte FCS, as the card captured them.
        let frame_bytes: Vec<u8> = (0..64).collect();
        let mut body = vec![0, 0];
        body.extend_from_slice(&frame_bytes);
        for ext in [0, 1, 3] {
            let r = record(1 << 32, types::ETH, ext, &body, 64, 0);
            let h = head(&r).unwrap();
            assert_eq!(h.rlen, r.len());
            let f = frame(&r, &h).unwrap();
            assert_eq!(f.linktype, link::LINKTYPE_ETHERNET);
            assert_eq!(f.start, HEADER_LEN + ext * EXT_LEN + 2);
            // The record is padded to 8 bytes: the padding is not frame.
            assert!(r.len() > f.start + 64);
            assert_eq!(&r[f.start..f.start + f.caplen], &frame_bytes[..]);
        }
        // The wire length bounds the frame inside the padding.
        let r = record(1 << 32, types::ETH, 0, &body, 20, 0);
        let f = frame(&r, &head(&r).unwrap()).unwrap();
        assert_eq!(f.caplen, 20);
    }

    #[test]
    fn ip_and_pos_types_and_the_rest() {
        let ip = [0x45u8; 20];
        let r = record(1 << 32, types::IPV4, 0, &ip, 20, 0);
        let f = frame(&r, &head(&r).unwrap()).unwrap();
        assert_eq!(
            (f.start, f.caplen, f.linktype),
            (16, 20, link::LINKTYPE_IPV4)
        );
        let r = record(
            1 << 32,
            types::COLOR_HDLC_POS,
            0,
            &[0xFF, 0x03, 0, 0x21],
            4,
            7,
        );
        assert_eq!(
            frame(&r, &head(&r).unwrap()).unwrap().linktype,
            link::LINKTYPE_PPP_HDLC
        );
        let r = record(1 << 32, types::META, 0, &[1, 2, 3], 0, 0);
        let f = frame(&r, &head(&r).unwrap()).unwrap();
        assert_eq!((f.start, f.caplen, f.linktype), (0, r.len(), LINKTYPE_ERF));
    }

    #[test]
    fn malformed_records_say_why() {
        // Extension bit set, but the record ends with the header.
        let mut r = record(1 << 32, types::ETH, 0, &[], 0, 0);
        r[8] |= 0x80;
        assert!(frame(&r, &head(&r).unwrap())
            .unwrap_err()
            .contains("extension headers"));
        // An Ethernet record too short for its 2-byte sub-header.
        let mut r = record(1 << 32, types::ETH, 0, &[], 0, 0);
        r.truncate(16);
        r[10..12].copy_from_slice(&16u16.to_be_bytes());
        assert!(frame(&r, &head(&r).unwrap())
            .unwrap_err()
            .contains("sub-header"));
    }

    fn erf_file(n: usize) -> Vec<u8> {
        let mut f = Vec::new();
        for i in 0..n {
            let mut body = vec![0, 0];
            body.extend_from_slice(&[0x11; 60]);
            f.extend(record(
                (1_700_000_000 << 32) + (i as u64) * 1000,
                types::ETH,
                0,
                &body,
                64,
                0,
            ));
        }
        f
    }

    #[test]
    fn erf_files_are_told_by_their_first_records() {
        let f = erf_file(30);
        assert!(looks_like(&f, true));
        // The prefix of a longer file: 20 whole records were checked.
        assert!(looks_like(&f[..f.len() - 5], false));
        // Two records and the end of the file.
        assert!(looks_like(&erf_file(2), true));
        // Two records, then the prefix ends inside the third: not enough seen.
        let f3 = erf_file(3);
        assert!(!looks_like(&f3[..f3.len() - 5], false));
        // Padding alone is not a capture.
        let pad = record(0, types::PAD, 0, &[0; 40], 0, 0);
        assert!(!looks_like(&pad.repeat(5), true));
    }

    #[test]
    fn other_files_are_not_erf() {
        assert!(!looks_like(b"", true));
        let text = b"Frame 1: 98 bytes on wire (784 bits), 98 bytes captured (784 bits) on interface eth0, id 0\n".repeat(20);
        assert!(!looks_like(&text, true));
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        assert!(!looks_like(&noise, true));
        // A timestamp two seconds back.
        let mut f = erf_file(4);
        let back = (1_700_000_000u64 - 2) << 32;
        let rlen = head(&f).unwrap().rlen;
        f[2 * rlen..2 * rlen + 8].copy_from_slice(&back.to_le_bytes());
        assert!(!looks_like(&f, true));
    }

    #[test]
    fn the_tally_tells_losses_flags_and_other_types() {
        let mut t = Tally::default();
        let r = record(1 << 32, types::ETH, 0, &[0; 20], 18, 3);
        t.record(&head(&r).unwrap());
        // A color type's lctr is its color, not a loss counter.
        let r = record(1 << 32, types::COLOR_ETH, 0, &[0; 20], 18, 9);
        t.record(&head(&r).unwrap());
        let mut r = record(1 << 32, types::META, 0, &[0; 20], 0, 0);
        r[9] |= FLAG_RX_ERROR;
        t.record(&head(&r).unwrap());
        let w = t.warnings();
        assert!(w[0].contains("lost 3 packets"), "{w:?}");
        assert!(
            w[1].contains("1 ERF records are marked with a receive error"),
            "{w:?}"
        );
        assert!(w[2].contains("1 of type 27 (provenance metadata)"), "{w:?}");
        assert!(Tally::default().warnings().is_empty());
    }
}
