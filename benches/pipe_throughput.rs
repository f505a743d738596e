//! How many data segments per second of CPU a connection pair pushes
//! through the in-memory pipe with no loss: codec, sender, receiver and
//! ACK processing together. Criterion reports the figure as elements
//! (data segments) per second; the AE and delayed-ACK runs are peers in
//! the same process, so their ratio shows what fewer ACKs save.

use ackwise::connection::{AckPolicyConfig, Config};
use ackwise::testing::{transfer, PipeConfig};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

const BYTES: usize = 8 << 20;

fn config(policy: AckPolicyConfig) -> Config {
    Config {
        ack_policy: policy,
        min_rto: Duration::from_millis(200),
        send_buffer: 4 << 20,
        recv_buffer: 4 << 20,
        ..Config::default()
    }
}

fn run(policy: AckPolicyConfig, data: &[u8]) -> u64 {
    let out = transfer(
        PipeConfig::default(),
        config(policy),
        config(policy),
        data,
        &[],
        Duration::from_secs(3_600),
    )
    .expect("pipe");
    assert_eq!(out.server_received.len(), data.len());
    out.client_stats.data_segments_sent
}

fn bench(c: &mut Criterion) {
    let data = vec![0xa5u8; BYTES];
    let mut group = c.benchmark_group("pipe_8MiB");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for (name, policy) in [
        ("every", AckPolicyConfig::Every),
        ("delayed", AckPolicyConfig::DELAYED),
    ] {
        let segments = run(policy, &data);
        group.throughput(Throughput::Elements(segments));
        group.bench_function(name, |b| b.iter(|| black_box(run(policy, &data))));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
