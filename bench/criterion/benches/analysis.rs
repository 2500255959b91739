//! Whole-analysis throughput (every SCTP inference, TCP tracking on) on generated captures,
//! single-threaded and with the reading stage on a second thread (`Options::pipeline`).

mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use analyzer::analyze::{analyze_reader, Options};

fn analysis(c: &mut Criterion) {
    let mut g = c.benchmark_group("analysis");
    g.sample_size(10);
    for (kind, name) in common::KINDS {
        let data = common::capture(name);
        g.throughput(Throughput::Bytes(data.len() as u64));
        for (label, pipeline) in [("1 thread", false), ("pipelined", true)] {
            let opts = Options {
                keep_rows: false,
                pipeline,
                ..Options::default()
            };
            g.bench_function(format!("{kind}/{label}"), |b| {
                b.iter(|| {
                    let a = analyze_reader(kind, common::reader(&data), &opts, &mut |_| {});
                    (a.associations.len(), a.tcp_flows.len())
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, analysis);
criterion_main!(benches);
