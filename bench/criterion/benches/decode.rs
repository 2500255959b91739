//! Decode throughput: capture records -> link / IP (with reassembly) -> SCTP common header,
//! CRC32c and every chunk parsed, without the association tracker or inference.

mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use analyzer::net::NetDecoder;
use analyzer::sctp::{self, SctpPacket};

fn decode(c: &mut Criterion) {
    let mut g = c.benchmark_group("decode");
    g.sample_size(20);
    for (kind, name) in common::KINDS {
        let data = common::capture(name);
        g.throughput(Throughput::Bytes(data.len() as u64));
        g.bench_function(format!("records/{kind}"), |b| {
            b.iter(|| {
                let mut r = common::reader(&data);
                let mut n = 0u64;
                while let Some(f) = r.next_frame() {
                    n += f.data.len() as u64;
                }
                n
            })
        });
        g.bench_function(format!("link_ip_sctp/{kind}"), |b| {
            b.iter(|| {
                let mut r = common::reader(&data);
                let mut net = NetDecoder::new();
                let (mut chunks, mut good) = (0u64, 0u64);
                while let Some(f) = r.next_frame() {
                    let Ok(Some(ip)) = net.decode(&f) else {
                        continue;
                    };
                    if ip.proto != 132 {
                        continue;
                    }
                    let Ok(p) = SctpPacket::new_checked(&ip.payload[..]) else {
                        continue;
                    };
                    good += u64::from(sctp::crc32c::verify(&ip.payload));
                    for v in p.chunks(ip.missing).flatten() {
                        chunks += u64::from(v.parse().is_ok());
                    }
                }
                (chunks, good)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
