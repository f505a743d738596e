#!/bin/sh
# Loopback benchmark: a bulk transfer over kernel TCP, quinn and ackwise on
# 127.0.0.1 (goodput, ACK packets per MiB, receiver CPU per GiB), then
# transfers through `ackwise relay`'s asymmetric link (10 Mbit/s forward,
# 64 kbit/s reverse, 100 ms RTT). Prints markdown tables on stdout.
#
#   scripts/bench-loopback.sh                 # 1 GiB per loopback transfer
#   scripts/bench-loopback.sh --quick         # 64 MiB
#   scripts/bench-loopback.sh --bytes 256MiB --only tcp,quinn
#
# Arguments are passed to examples/bench_loopback.rs (see its --help).
set -eu
cd "$(dirname "$0")/.."
cargo build --release --example bench_loopback
exec target/release/examples/bench_loopback "$@"
