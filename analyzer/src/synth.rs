//! Large synthetic captures for benchmarks: a real capture repeated with shifted times, SCTP
//! verification tags and ports (CRC32c recomputed) and TCP ports, so that every copy is its own
//! association or connection. Deterministic: the same source gives the same bytes.

use std::io::{self, Write};

use crate::capture::{CaptureError, CaptureReader};
use crate::net::NetDecoder;

/// The frames of a source capture, with where their SCTP / TCP headers start.
pub struct Source {
    linktype: u32,
    frames: Vec<SourceFrame>,
    /// Capture time spanned by one copy (plus a second of quiet between copies).
    span_ns: i64,
}

struct SourceFrame {
    ts_ns: i64,
    sctp_at: Option<usize>,
    tcp_at: Option<usize>,
    data: Vec<u8>,
}

impl Source {
    /// Loads every frame of `reader` (a small capture: it is held in memory).
    /// `load` of the capture file at `path`.
    pub fn open(path: &std::path::Path) -> Result<Source, CaptureError> {
        Source::load(CaptureReader::open(path)?)
    }

    pub fn load(mut reader: CaptureReader) -> Result<Source, CaptureError> {
        let mut dec = NetDecoder::new();
        let mut linktype = None;
        let mut frames = Vec::new();
        while let Some(f) = reader.next_frame() {
            let (mut sctp_at, mut tcp_at) = (None, None);
            if let Ok(Some(ip)) = dec.decode(&f) {
                if !ip.reassembled {
                    let at = ip.payload.as_ref().as_ptr() as usize - f.data.as_ptr() as usize;
                    match ip.proto {
                        132 => sctp_at = Some(at),
                        6 => tcp_at = Some(at),
                        _ => {}
                    }
                }
            }
            if *linktype.get_or_insert(f.linktype) != f.linktype {
                return Err(CaptureError::BadHeader {
                    format: "pcap",
                    offset: f.offset,
                    reason: "the source mixes link types (one pcap link type per output)".into(),
                });
            }
            frames.push(SourceFrame {
                ts_ns: f.ts_ns,
                sctp_at,
                tcp_at,
                data: f.data.to_vec(),
            });
        }
        let first = frames.first().map_or(0, |f| f.ts_ns);
        let last = frames.last().map_or(0, |f| f.ts_ns);
        Ok(Source {
            linktype: linktype.unwrap_or(1),
            frames,
            span_ns: last - first + 1_000_000_000,
        })
    }

    /// Writes a nanosecond classic pcap of at least `target_bytes` (whole copies of the
    /// source); returns the bytes and frames written and the number of copies.
    pub fn write(&self, out: &mut dyn Write, target_bytes: u64) -> io::Result<(u64, u64, u32)> {
        // Global header (nanosecond magic, version 2.4, snaplen 256 KiB, the source's link type).
        out.write_all(&0xa1b2_3c4du32.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&[0; 8])?;
        out.write_all(&262_144u32.to_le_bytes())?;
        out.write_all(&self.linktype.to_le_bytes())?;
        let (mut written, mut copy) = (24u64, 0u32);
        let mut d = Vec::new();
        while written < target_bytes && !self.frames.is_empty() {
            for f in &self.frames {
                d.clear();
                d.extend_from_slice(&f.data);
                if let Some(o) = f.sctp_at {
                    patch_sctp(&mut d, o, copy);
                }
                if let Some(o) = f.tcp_at {
                    patch_tcp(&mut d, o, copy);
                }
                let t = f.ts_ns + i64::from(copy) * self.span_ns;
                out.write_all(&((t / 1_000_000_000) as u32).to_le_bytes())?;
                out.write_all(&((t % 1_000_000_000) as u32).to_le_bytes())?;
                out.write_all(&(d.len() as u32).to_le_bytes())?;
                out.write_all(&(d.len() as u32).to_le_bytes())?;
                out.write_all(&d)?;
                written += 16 + d.len() as u64;
            }
            copy += 1;
        }
        Ok((written, u64::from(copy) * self.frames.len() as u64, copy))
    }

    /// The capture of `write` in memory.
    pub fn to_vec(&self, target_bytes: u64) -> Vec<u8> {
        let mut v = Vec::with_capacity(target_bytes as usize + (1 << 16));
        self.write(&mut v, target_bytes)
            .expect("writing to a Vec cannot fail");
        v
    }
}

/// Copy `copy` of an SCTP packet at `o`: ports shifted, verification tag and INIT / INIT-ACK
/// Initiate Tags changed, CRC32c recomputed.
fn patch_sctp(d: &mut [u8], o: usize, copy: u32) {
    if d.len() < o + 12 {
        return;
    }
    let mix = copy.wrapping_mul(0x9E37_79B9);
    // RFC 9260 3.1: source and destination ports, then the verification tag.
    shift_ports(d, o, copy);
    let tag = u32::from_be_bytes([d[o + 4], d[o + 5], d[o + 6], d[o + 7]]);
    if tag != 0 {
        d[o + 4..o + 8].copy_from_slice(&(tag ^ mix).to_be_bytes());
    }
    // RFC 9260 3.3.2 / 3.3.3: INIT and INIT-ACK carry the tag the peer will use.
    let mut c = o + 12;
    while c + 8 <= d.len() {
        let ctype = d[c];
        let len = u16::from_be_bytes([d[c + 2], d[c + 3]]) as usize;
        if len < 4 {
            break;
        }
        if ctype == 1 || ctype == 2 {
            let t = u32::from_be_bytes([d[c + 4], d[c + 5], d[c + 6], d[c + 7]]);
            d[c + 4..c + 8].copy_from_slice(&(t ^ mix).to_be_bytes());
        }
        c += (len + 3) & !3;
    }
    // RFC 9260 6.8: the checksum over the patched packet.
    d[o + 8..o + 12].copy_from_slice(&[0; 4]);
    let crc = crate::sctp::crc32c::compute(&d[o..]);
    d[o + 8..o + 12].copy_from_slice(&crc.to_le_bytes());
}

/// Copy `copy` of a TCP segment at `o`: ports shifted (RFC 9293 3.1). The TCP checksum is left
/// as it was: neither we nor tshark (by default) nor tcptrace verify it.
fn patch_tcp(d: &mut [u8], o: usize, copy: u32) {
    if d.len() >= o + 4 {
        shift_ports(d, o, copy);
    }
}

/// Source and destination ports (the first two fields of SCTP and TCP headers alike) moved by
/// the copy number.
fn shift_ports(d: &mut [u8], o: usize, copy: u32) {
    for i in [0usize, 2] {
        let p = u16::from_be_bytes([d[o + i], d[o + i + 1]]).wrapping_add(copy as u16);
        d[o + i..o + i + 2].copy_from_slice(&p.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str) -> Option<Source> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../sample-traces")
            .join(name);
        Some(Source::load(CaptureReader::open(&p).ok()?).unwrap())
    }

    #[test]
    fn copies_are_distinct_associations_with_valid_checksums() {
        let Some(src) = sample("cut_p20_sack40_sender.pcap") else {
            return;
        };
        let bytes = src.to_vec(200_000);
        let reader = CaptureReader::from_read(Box::new(std::io::Cursor::new(bytes))).unwrap();
        let c = crate::analyze::analyze_reader("synth", reader, &Default::default(), &mut |_| {});
        assert!(c.associations.len() >= 2, "{}", c.associations.len());
        assert_eq!(c.bad_checksums, 0);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        // Every copy is analysed like the original: same retransmission count per copy.
        let report = crate::report::CaptureReport::from_analysis(&c);
        let r: Vec<u64> = report
            .associations
            .iter()
            .map(|a| a.directions.iter().map(|d| d.retransmissions.total).sum())
            .collect();
        assert!(r.windows(2).all(|w| w[0] == w[1]), "{r:?}");
    }

    #[test]
    fn deterministic() {
        let Some(src) = sample("mixed_p20_cut5_rec8_sender.pcap") else {
            return;
        };
        assert_eq!(src.to_vec(1 << 20), src.to_vec(1 << 20));
    }
}
