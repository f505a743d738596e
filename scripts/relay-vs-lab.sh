#!/bin/bash
# The same path through `ackwise relay` on 127.0.0.1 (real UDP sockets,
# `ackwise send` and `ackwise recv`) and in the lab's emulator (a scenario
# file), one transfer per strategy; prints a markdown table of completion
# times and receiver ACK counts side by side.
#
#   scripts/relay-vs-lab.sh                       # 30 MB, ae,da,4w,4w-adaptive
#   scripts/relay-vs-lab.sh --bytes 10000000 --strategies ae,4w
#
# The path: 50 Mbit/s each way, 25 ms each way, 210-packet drop-tail
# queues, MSS 1400. The relay's time includes the file protocol's header
# and verdict round trips (about three RTTs) that the lab's flow does not
# have. The last column runs the lab again with up to 1 ms of
# order-keeping delay jitter on both links, seeds 1-5: the range of ACK
# counts that timing noise alone gives a polled strategy there.
set -eu
cd "$(dirname "$0")/.."
bytes=30000000
strategies=ae,da,4w,4w-adaptive
while [ $# -gt 0 ]; do
    case "$1" in
    --bytes) bytes=$2; shift 2 ;;
    --strategies) strategies=$2; shift 2 ;;
    -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "relay-vs-lab: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
done
cargo build --release --quiet
bin=target/release/ackwise
work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

head -c "$bytes" /dev/urandom >"$work/payload.bin"
quoted=$(echo "$strategies" | sed 's/[^,]*/"&"/g')
cat >"$work/path.toml" <<EOF
name = "relay-path"
seed = 1
strategies = [$quoted]
segment_bytes = 1400
[bottleneck]
rate = "50mbit"
delay = "25ms"
buffer_packets = 210
[reverse]
rate = "50mbit"
delay = "25ms"
buffer_packets = 210
[[flows]]
bytes = $bytes
EOF
"$bin" lab "$work/path.toml" --csv "$work/lab.csv" --quiet >/dev/null
for seed in 1 2 3 4 5; do
    sed -e "s/^seed = 1$/seed = $seed/" -e 's/^buffer_packets = 210$/buffer_packets = 210\njitter = "1ms"/' \
        "$work/path.toml" >"$work/jitter.toml"
    "$bin" lab "$work/jitter.toml" --csv "$work/jitter-$seed.csv" --quiet >/dev/null
done

recv_port=$(free_port)
relay_port=$(free_port)
mkdir "$work/out"
"$bin" recv --listen "127.0.0.1:$recv_port" --out "$work/out" --overwrite --mss 1400 --quiet &
pids+=($!)
"$bin" relay --listen "127.0.0.1:$relay_port" --to "127.0.0.1:$recv_port" \
    --fwd-rate 50mbit --rev-rate 50mbit --fwd-delay 25ms --rev-delay 25ms \
    --buffer 210 --rev-buffer 210 >/dev/null 2>&1 &
pids+=($!)
sleep 1

echo "| strategy | relay s | lab s | time ratio | relay ACKs | lab ACKs | ACK ratio | relay retx / RTOs | lab retx / RTOs | lab ACKs, 1 ms jitter, seeds 1-5 |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for s in ${strategies//,/ }; do
    line=$("$bin" send "$work/payload.bin" --to "127.0.0.1:$relay_port" --strategy "$s" \
        --mss 1400 2>&1 | grep "files, ")
    relay_s=$(echo "$line" | sed -n 's/.* in \([0-9.]*\) s:.*/\1/p')
    relay_acks=$(echo "$line" | sed -n 's/.*received \([0-9]*\);.*/\1/p')
    relay_retx=$(echo "$line" | sed -n 's/.*; \([0-9]*\) retransmissions, \([0-9]*\) timeouts.*/\1 \/ \2/p')
    read -r lab_s lab_acks lab_retx lab_rtos < <(awk -F, -v s="$s" \
        '$2 == s && $6 == "false" { print $7, $11, $13, $14 }' "$work/lab.csv")
    jitter_acks=$(cat "$work"/jitter-*.csv | awk -F, -v s="$s" '$2 == s && $6 == "false" { print $11 }' |
        sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }')
    awk -v s="$s" -v rs="$relay_s" -v ls="$lab_s" -v ra="$relay_acks" -v la="$lab_acks" \
        -v rr="$relay_retx" -v lr="$lab_retx / $lab_rtos" -v ja="$jitter_acks" \
        'BEGIN { printf "| %s | %.3f | %.3f | %.3f | %d | %d | %.3f | %s | %s | %s |\n", s, rs, ls, rs / ls, ra, la, ra / la, rr, lr, ja }'
done
