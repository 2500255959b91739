//! Builds a large classic pcap for benchmarks by repeating a source capture with shifted times,
//! SCTP verification tags and ports (CRC32c recomputed) and TCP ports, so every copy is its own
//! association or connection. Deterministic: the same inputs give the same bytes.
//!
//! Usage: cargo run --release --example make_big_capture -- SOURCE.pcap OUT.pcap TARGET_MB

use std::fs::File;
use std::io::{BufWriter, Write};

use analyzer::capture::CaptureReader;
use analyzer::net::NetDecoder;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: make_big_capture SOURCE.pcap OUT.pcap TARGET_MB");
        std::process::exit(2);
    }
    let target = args[3].parse::<u64>()? << 20;
    // Load the source frames once (Ethernet/raw/SLL frames of a small capture).
    let mut reader = CaptureReader::open(std::path::Path::new(&args[1]))?;
    let mut frames: Vec<(i64, u32, Vec<u8>)> = Vec::new();
    // Offsets of TCP headers, by frame index.
    let mut tcp_at: Vec<u32> = Vec::new();
    let mut dec = NetDecoder::new();
    let mut linktype = None;
    while let Some(f) = reader.next_frame() {
        // Offset of the IP payload inside the frame, to patch SCTP in place.
        let (ip_off, tcp_off) = match dec.decode(&f) {
            Ok(Some(ip)) if !ip.reassembled && (ip.proto == 132 || ip.proto == 6) => {
                let p = (ip.payload.as_ref().as_ptr() as usize - f.data.as_ptr() as usize) as u32;
                if ip.proto == 132 {
                    (p, u32::MAX)
                } else {
                    (u32::MAX, p)
                }
            }
            _ => (u32::MAX, u32::MAX),
        };
        tcp_at.push(tcp_off);
        if *linktype.get_or_insert(f.linktype) != f.linktype {
            return Err("the source mixes link types (one pcap link type per output)".into());
        }
        frames.push((f.ts_ns, ip_off, f.data.to_vec()));
    }
    let span = frames.last().map_or(0, |f| f.0) - frames.first().map_or(0, |f| f.0) + 1_000_000_000;
    let mut out = BufWriter::with_capacity(1 << 20, File::create(&args[2])?);
    // Global header: nanosecond pcap, the source's link type.
    out.write_all(&0xa1b2_3c4du32.to_le_bytes())?;
    out.write_all(&2u16.to_le_bytes())?;
    out.write_all(&4u16.to_le_bytes())?;
    out.write_all(&[0; 8])?;
    out.write_all(&262_144u32.to_le_bytes())?;
    out.write_all(&linktype.unwrap_or(1).to_le_bytes())?;
    let mut written = 24u64;
    let mut copy: u32 = 0;
    while written < target {
        for (k, (ts, off, data)) in frames.iter().enumerate() {
            let mut d = data.clone();
            let t_off = tcp_at[k] as usize;
            if tcp_at[k] != u32::MAX && d.len() >= t_off + 4 {
                // RFC 9293 3.1: ports are the first two 16-bit fields. The TCP checksum is left
                // as it was (neither we nor tshark by default verify it).
                for i in [0usize, 2] {
                    let p = u16::from_be_bytes([d[t_off + i], d[t_off + i + 1]])
                        .wrapping_add(copy as u16);
                    d[t_off + i..t_off + i + 2].copy_from_slice(&p.to_be_bytes());
                }
            }
            if *off != u32::MAX {
                let o = *off as usize;
                if d.len() >= o + 12 {
                    // Shift ports and tags per copy; recompute the CRC32c (RFC 9260 6.8).
                    for (i, delta) in [(0usize, copy as u16), (2, copy as u16)] {
                        let p = u16::from_be_bytes([d[o + i], d[o + i + 1]]).wrapping_add(delta);
                        d[o + i..o + i + 2].copy_from_slice(&p.to_be_bytes());
                    }
                    let tag = u32::from_be_bytes([d[o + 4], d[o + 5], d[o + 6], d[o + 7]]);
                    if tag != 0 {
                        d[o + 4..o + 8]
                            .copy_from_slice(&(tag ^ copy.wrapping_mul(0x9E37_79B9)).to_be_bytes());
                    }
                    // INIT / INIT-ACK carry the tag in their Initiate Tag (RFC 9260 3.3.2).
                    let mut c = o + 12;
                    while c + 8 <= d.len() {
                        let ctype = d[c];
                        let len = u16::from_be_bytes([d[c + 2], d[c + 3]]) as usize;
                        if len < 4 {
                            break;
                        }
                        if ctype == 1 || ctype == 2 {
                            let t = u32::from_be_bytes([d[c + 4], d[c + 5], d[c + 6], d[c + 7]]);
                            d[c + 4..c + 8].copy_from_slice(
                                &(t ^ copy.wrapping_mul(0x9E37_79B9)).to_be_bytes(),
                            );
                        }
                        c += (len + 3) & !3;
                    }
                    d[o + 8..o + 12].copy_from_slice(&[0; 4]);
                    let crc = analyzer::sctp::crc32c::compute(&d[o..]);
                    d[o + 8..o + 12].copy_from_slice(&crc.to_le_bytes());
                }
            }
            let t = ts + copy as i64 * span;
            out.write_all(&((t / 1_000_000_000) as u32).to_le_bytes())?;
            out.write_all(&((t % 1_000_000_000) as u32).to_le_bytes())?;
            out.write_all(&(d.len() as u32).to_le_bytes())?;
            out.write_all(&(d.len() as u32).to_le_bytes())?;
            out.write_all(&d)?;
            written += 16 + d.len() as u64;
        }
        copy += 1;
    }
    out.flush()?;
    eprintln!(
        "wrote {} MB, {} copies of {} frames",
        written >> 20,
        copy,
        frames.len()
    );
    Ok(())
}
