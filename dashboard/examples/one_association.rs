//! Writes a capture of one SCTP association of about `TARGET_MB` (default 200 MB, about a
//! million packets) for `bench/dashboard.sh`: a handshake, then DATA of 244-byte messages from
//! one endpoint, each SACKed by the peer 0.9 ms later (every 50th time, the DATA of 20 ms before is sent
//! again: spurious retransmissions), then SHUTDOWN. Ethernet + IPv4, CRC32c set. Deterministic.
//!
//! Usage: cargo run --release -p dashboard --example one_association -- OUT.pcap [TARGET_MB]

use std::fs::File;
use std::io::{BufWriter, Write};

const A: [u8; 4] = [10, 1, 0, 1];
const B: [u8; 4] = [10, 2, 0, 1];
const TAG_A: u32 = 0x1111_2222;
const TAG_B: u32 = 0x3333_4444;
const PAYLOAD: usize = 244;

struct Pcap<W: Write> {
    out: W,
    bytes: u64,
    frames: u64,
}

impl<W: Write> Pcap<W> {
    fn new(mut out: W) -> std::io::Result<Self> {
        // Little-endian microsecond pcap, Ethernet.
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&[0; 8]);
        h.extend_from_slice(&65535u32.to_le_bytes());
        h.extend_from_slice(&1u32.to_le_bytes());
        out.write_all(&h)?;
        Ok(Pcap {
            out,
            bytes: 24,
            frames: 0,
        })
    }

    /// One SCTP packet from `src` to `dst` (ports 38412 <-> 38412), `vtag`, chunks as given.
    fn sctp(
        &mut self,
        t_us: u64,
        src: [u8; 4],
        dst: [u8; 4],
        vtag: u32,
        chunks: &[u8],
    ) -> std::io::Result<()> {
        let mut sctp = Vec::with_capacity(12 + chunks.len());
        sctp.extend_from_slice(&38412u16.to_be_bytes());
        sctp.extend_from_slice(&38412u16.to_be_bytes());
        sctp.extend_from_slice(&vtag.to_be_bytes());
        sctp.extend_from_slice(&[0; 4]);
        sctp.extend_from_slice(chunks);
        let crc = analyzer::sctp::crc32c::compute(&sctp);
        sctp[8..12].copy_from_slice(&crc.to_le_bytes());
        let ip_len = 20 + sctp.len();
        let mut ip = vec![
            0x45,
            0,
            (ip_len >> 8) as u8,
            ip_len as u8,
            0,
            0,
            0x40,
            0,
            64,
            132,
            0,
            0,
        ];
        ip.extend_from_slice(&src);
        ip.extend_from_slice(&dst);
        let sum = !ip
            .chunks(2)
            .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .fold(0u32, |a, w| {
                let s = a + w;
                (s & 0xffff) + (s >> 16)
            }) as u16;
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
        let frame_len = 14 + ip_len;
        let mut rec = Vec::with_capacity(16 + frame_len);
        rec.extend_from_slice(&((t_us / 1_000_000) as u32).to_le_bytes());
        rec.extend_from_slice(&((t_us % 1_000_000) as u32).to_le_bytes());
        rec.extend_from_slice(&(frame_len as u32).to_le_bytes());
        rec.extend_from_slice(&(frame_len as u32).to_le_bytes());
        rec.extend_from_slice(&[2, 0, 0, 0, 0, src[3], 2, 0, 0, 0, 0, dst[3], 0x08, 0x00]);
        rec.extend_from_slice(&ip);
        rec.extend_from_slice(&sctp);
        self.out.write_all(&rec)?;
        self.bytes += rec.len() as u64;
        self.frames += 1;
        Ok(())
    }
}

fn chunk(ctype: u8, flags: u8, body: &[u8]) -> Vec<u8> {
    let len = 4 + body.len();
    let mut c = vec![ctype, flags, (len >> 8) as u8, len as u8];
    c.extend_from_slice(body);
    c.resize(len.div_ceil(4) * 4, 0);
    c
}

/// INIT / INIT-ACK body: tag, a_rwnd, streams, initial TSN.
fn init_body(tag: u32, tsn: u32) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&tag.to_be_bytes());
    b.extend_from_slice(&1_048_576u32.to_be_bytes());
    b.extend_from_slice(&10u16.to_be_bytes());
    b.extend_from_slice(&10u16.to_be_bytes());
    b.extend_from_slice(&tsn.to_be_bytes());
    b
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: one_association OUT.pcap [TARGET_MB (default 200)]");
        std::process::exit(2);
    };
    let target_mb: f64 = match args.get(2).map(|s| s.parse()) {
        None => 200.0,
        Some(Ok(v)) => v,
        Some(Err(_)) => {
            eprintln!("one_association: TARGET_MB must be a number");
            std::process::exit(2);
        }
    };
    let target = (target_mb * (1u64 << 20) as f64) as u64;
    let mut p = Pcap::new(BufWriter::with_capacity(1 << 20, File::create(path)?))?;
    let t0: u64 = 1_700_000_000_000_000;
    let mut t = t0;
    let mut cookie_param = vec![0, 7, 0, 12];
    cookie_param.extend_from_slice(b"cookie!!");
    p.sctp(t, A, B, 0, &chunk(1, 0, &init_body(TAG_A, 1000)))?;
    t += 1000;
    let mut ack = init_body(TAG_B, 5000);
    ack.extend_from_slice(&cookie_param);
    p.sctp(t, B, A, TAG_A, &chunk(2, 0, &ack))?;
    t += 1000;
    p.sctp(t, A, B, TAG_B, &chunk(10, 0, b"cookie!!"))?;
    t += 1000;
    p.sctp(t, B, A, TAG_A, &chunk(11, 0, &[]))?;
    let payload = [0x5a_u8; PAYLOAD];
    let mut tsn: u32 = 1000;
    let mut ssn: u16 = 0;
    let mut n: u64 = 0;
    while p.bytes < target {
        t += 1000;
        let data = |tsn: u32, ssn: u16| {
            let mut body = Vec::with_capacity(12 + PAYLOAD);
            body.extend_from_slice(&tsn.to_be_bytes());
            body.extend_from_slice(&0u16.to_be_bytes());
            body.extend_from_slice(&ssn.to_be_bytes());
            body.extend_from_slice(&60u32.to_be_bytes()); // NGAP
            body.extend_from_slice(&payload);
            chunk(0, 0x03, &body)
        };
        p.sctp(t, A, B, TAG_B, &data(tsn, ssn))?;
        if n % 50 == 49 {
            // The DATA of 20 ms ago sent again (a spurious retransmission: it was acknowledged).
            p.sctp(
                t + 500,
                A,
                B,
                TAG_B,
                &data(tsn.wrapping_sub(20), ssn.wrapping_sub(20)),
            )?;
        }
        let mut sack = Vec::with_capacity(12);
        sack.extend_from_slice(&tsn.to_be_bytes());
        sack.extend_from_slice(&1_048_576u32.to_be_bytes());
        sack.extend_from_slice(&[0; 4]);
        p.sctp(t + 900, B, A, TAG_A, &chunk(3, 0, &sack))?;
        tsn = tsn.wrapping_add(1);
        ssn = ssn.wrapping_add(1);
        n += 1;
    }
    t += 10_000;
    // SHUTDOWN acknowledges what A received: nothing of B (initial TSN 5000).
    p.sctp(t, A, B, TAG_B, &chunk(7, 0, &4999u32.to_be_bytes()))?;
    p.sctp(t + 1000, B, A, TAG_A, &chunk(8, 0, &[]))?;
    p.sctp(t + 2000, A, B, TAG_B, &chunk(14, 0, &[]))?;
    p.out.flush()?;
    eprintln!(
        "wrote {path}: {} MB, {} frames, one association",
        p.bytes >> 20,
        p.frames
    );
    Ok(())
}
