#!/bin/bash
# The same path through `ackwise relay` on 127.0.0.1 (real UDP sockets,
# `ackwise send` and `ackwise recv`) and in the lab's emulator (a scenario
# file); prints a markdown table of completion times and receiver ACK
# counts side by side, and whether they agree (time within 10 %, ACKs
# within 20 %).
#
#   scripts/relay-vs-lab.sh              # 30 MB; ae, da, 4w, 4w-adaptive, the default (about 10 min)
#   scripts/relay-vs-lab.sh --bytes 10000000 --strategies ae,4w --runs 3 --seeds 5
#   scripts/relay-vs-lab.sh --check      # exit 1 when a strategy disagrees
#
# The path: 50 Mbit/s each way, 25 ms each way, 210-packet drop-tail
# queues, MSS 1400. How the lab models the relay between two endpoints on
# one machine (`--model` replaces these top-level scenario keys):
#
# - the relay releases datagrams from tokio timers, which fire on ticks
#   (about 1.1 ms apart on Linux: 4-5 datagrams at 50 Mbit/s reach the
#   receiver within microseconds, then nothing for 1.1 ms), so packets
#   reach the hosts on the ticks of a clock (`access_tick`); the script
#   measures the tick first, from a capture of a short transfer, and the
#   seeds take it -2 % to +2 % in turn (the relay's ticks vary, and the
#   polled strategies' lab means are sensitive to tens of microseconds);
# - loopback has no access links to spread a burst (`access_rate`);
# - `send` reads a batch of ACKs before it sends again, while `recv`
#   answers each segment (`sender_reads_batches`);
# - the endpoint configures its connections for timers that fire up to a
#   tick late: a spreading sender may catch up by 2 ms (`socket_timers`).
#
# A polled strategy's ACK count follows the window it settles at and how
# long its slow-start recovery lasts, both down to that timing, so one run
# of either side is one draw: the relay runs --runs times (default 20),
# the lab --seeds seeds (default 40), and means are compared. The lab's
# run without the model is shown beside them. The relay's time includes
# the file protocol's header and verdict round trips (about three RTTs)
# that the lab's flow does not have.
set -eu
cd "$(dirname "$0")/.."
bytes=30000000
strategies=ae,da,4w,4w-adaptive,4w-adaptive+spread+sparse-holes
runs=20
seeds=40
check=0
# How the lab models the relay between two socket endpoints on one
# machine (see the header); the tick is measured unless --model is given.
model=
model_given=0
while [ $# -gt 0 ]; do
    case "$1" in
    --bytes) bytes=$2; shift 2 ;;
    --strategies) strategies=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --check) check=1; shift ;;
    --model) model=$2; model_given=1; shift 2 ;;
    -h | --help) sed -n '2,35p' "$0"; exit 0 ;;
    *) echo "relay-vs-lab: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
done
for n in "$runs" "$seeds"; do
    case "$n" in
    '' | *[!0-9]* | 0) echo "relay-vs-lab: --runs and --seeds take a whole number from 1 up (got '$n')" >&2; exit 2 ;;
    esac
done
cargo build --release --quiet
bin=target/release/ackwise
work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    [ -n "${KEEP_WORK:-}" ] && echo "kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# The path, as the relay emulates it: relay LISTEN_PORT TO_PORT.
relay() {
    "$bin" relay --listen "127.0.0.1:$1" --to "127.0.0.1:$2" \
        --fwd-rate 50mbit --rev-rate 50mbit --fwd-delay 25ms --rev-delay 25ms \
        --buffer 210 --rev-buffer 210 >/dev/null 2>&1
}

# Calibrate the model's tick on this machine (unless --model was given):
# one short transfer through a relay of its own, to a receiver that
# captures what arrives; the tick is the median time from one bunch of
# arriving datagrams to the next while the link is busy. The relay's
# ticks stretch with its load (about 1.25 ms under AE's ACK stream), so
# the transfer uses 4w, whose ACKs are few, as the polled strategies'
# are, whose counts the tick decides.
if [ "$model_given" = 0 ]; then
    cal_recv=$(free_port)
    cal_relay=$(free_port)
    mkdir "$work/cal"
    head -c 10000000 /dev/urandom >"$work/cal.bin"
    "$bin" recv --listen "127.0.0.1:$cal_recv" --out "$work/cal" --overwrite --mss 1400 --quiet \
        --pcap "$work/cal.pcap" &
    cal_pids=($!)
    relay "$cal_relay" "$cal_recv" &
    cal_pids+=($!)
    pids+=("${cal_pids[@]}")
    sleep 1
    "$bin" send "$work/cal.bin" --to "127.0.0.1:$cal_relay" --strategy 4w --mss 1400 >/dev/null 2>&1 || {
        echo "relay-vs-lab: the calibration transfer through the relay failed" >&2
        exit 1
    }
    kill "${cal_pids[@]}" 2>/dev/null || true
    wait "${cal_pids[@]}" 2>/dev/null || true
    tick_us=$(python3 - "$work/cal.pcap" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
magic = data[:4]
order, scale = {b"\xd4\xc3\xb2\xa1": ("<", 1e-6), b"\xa1\xb2\xc3\xd4": (">", 1e-6),
                b"\x4d\x3c\xb2\xa1": ("<", 1e-9), b"\xa1\xb2\x3c\x4d": (">", 1e-9)}[magic]
at, times = 24, []
while at + 16 <= len(data):
    sec, frac, incl, _ = struct.unpack(order + "IIII", data[at:at + 16])
    at += 16 + incl
    if incl > 500:  # a data segment, not an ACK sent back
        times.append(sec + frac * scale)
# Bunches: datagrams less than 0.4 ms after the one before (the relay
# sends a tick's datagrams one by one). While the link is busy each tick
# brings several; from one busy bunch to the next is a tick.
bunches = []
for t in times:
    if bunches and t - bunches[-1][1] < 0.0004:
        bunches[-1][1], bunches[-1][2] = t, bunches[-1][2] + 1
    else:
        bunches.append([t, t, 1])
gaps = sorted(b[0] - a[0] for a, b in zip(bunches, bunches[1:]) if a[2] >= 3 and b[2] >= 3)
print(round(gaps[len(gaps) // 2] * 1e5) * 10 if len(gaps) >= 100 else "")
PY
)
    if [ -z "$tick_us" ]; then
        echo "relay-vs-lab: too few bunches in the calibration capture; using a 1.1 ms tick" >&2
        tick_us=1100
    fi
    echo "relay: datagrams arrive in bunches ${tick_us} us apart on this machine" >&2
    model="access_rate = \"100gbit\"
access_tick = \"@TICK@us\"
sender_reads_batches = true
socket_timers = true"
fi

head -c "$bytes" /dev/urandom >"$work/payload.bin"
quoted=$(echo "$strategies" | sed 's/[^,]*/"&"/g')
scenario() {
    cat <<EOF
name = "relay-path"
seed = 1
strategies = [$quoted]
segment_bytes = 1400
$1
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
}
scenario "" >"$work/path.toml"
scenario "$model" >"$work/timed.toml"
echo "lab: $strategies, as is and modelling the relay on seeds 1-$seeds" >&2
"$bin" lab "$work/path.toml" --csv "$work/lab.csv" --quiet >/dev/null
for seed in $(seq 1 "$seeds"); do
    if [ "$model_given" = 0 ]; then
        # The relay's tick is no metronome (gaps of 1.0-1.2 ms, some
        # skipped), while the lab's polled strategies' mean ACK counts
        # move by a fifth between ticks 10 us apart: the seeds take the
        # measured tick -2 %, -1 %, 0, +1 % and +2 % in turn.
        tick=$((tick_us * (98 + (seed - 1) % 5) / 100))
        scenario "${model//@TICK@/$tick}" >"$work/timed.toml"
    fi
    "$bin" lab "$work/timed.toml" --seed "$seed" --csv "$work/timed-$seed.csv" --quiet >/dev/null
done
# One row per test flow: strategy, seconds, ACKs, retransmissions, RTOs.
cat "$work"/timed-*.csv | awk -F, '$6 == "false" { print $2, $7, $11, $13, $14 }' >"$work/lab-timed.txt"
awk -F, '$6 == "false" { print $2, $7, $11, $13, $14 }' "$work/lab.csv" >"$work/lab-plain.txt"

recv_port=$(free_port)
relay_port=$(free_port)
mkdir "$work/out"
"$bin" recv --listen "127.0.0.1:$recv_port" --out "$work/out" --overwrite --mss 1400 --quiet &
pids+=($!)
relay "$relay_port" "$recv_port" &
pids+=($!)
sleep 1

# Rounds go over every strategy in turn, so a slow moment of the machine
# falls on all of them alike.
: >"$work/relay.txt"
for round in $(seq 1 "$runs"); do
    for s in ${strategies//,/ }; do
        echo "relay: round $round of $runs, $s" >&2
        line=$("$bin" send "$work/payload.bin" --to "127.0.0.1:$relay_port" --strategy "$s" \
            --mss 1400 2>&1 | grep "files, ") || {
            echo "relay-vs-lab: the transfer with $s through the relay failed" >&2
            exit 1
        }
        echo "$line" | sed -n "s/.* in \([0-9.]*\) s:.*received \([0-9]*\); \([0-9]*\) retransmissions, \([0-9]*\) timeouts.*/$s \1 \2 \3 \4/p" >>"$work/relay.txt"
    done
done

echo "| strategy | relay s | lab s | time ratio | relay ACKs | lab ACKs | ACK ratio | relay retx / RTOs | lab retx / RTOs | lab as is: s / ACKs | agree |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
disagree=0
for s in ${strategies//,/ }; do
    row=$(awk -v s="$s" -v runs="$runs" -v seeds="$seeds" '
        FILENAME ~ /relay/ && $1 == s { rn++; rs += $2; ra += $3; rr += $4; rt += $5
            if (rn == 1 || $3 < rlo) rlo = $3; if (rn == 1 || $3 > rhi) rhi = $3 }
        FILENAME ~ /timed/ && $1 == s { ln++; ls += $2; la += $3; lr += $4; lt += $5
            if (ln == 1 || $3 < llo) llo = $3; if (ln == 1 || $3 > lhi) lhi = $3 }
        FILENAME ~ /plain/ && $1 == s { ps = $2; pa = $3 }
        END {
            if (rn != runs || ln != seeds) { print "missing"; exit }
            tr = (rs / rn) / (ls / ln); ar = (ra / rn) / (la / ln)
            ok = (tr >= 0.9 && tr <= 1.1 && ar >= 0.8 && ar <= 1.2) ? "yes" : "**no**"
            printf "| %s | %.3f | %.3f | %.3f | %.0f (%d-%d) | %.0f (%d-%d) | %.3f | %.0f / %.1f | %.0f / %.1f | %.3f / %d | %s |\n",
                s, rs / rn, ls / ln, tr, ra / rn, rlo, rhi, la / ln, llo, lhi, ar,
                rr / rn, rt / rn, lr / ln, lt / ln, ps, pa, ok
        }' "$work/relay.txt" "$work/lab-timed.txt" "$work/lab-plain.txt")
    if [ "$row" = missing ]; then
        echo "relay-vs-lab: missing results for $s (a summary line did not parse)" >&2
        exit 1
    fi
    echo "$row"
    case "$row" in *'**no**'*) disagree=1 ;; esac
done
echo "relay: means of $runs runs; lab: means of seeds 1-$seeds with the relay's model; ranges are ACK counts' min-max" >&2
if [ "$check" = 1 ] && [ "$disagree" = 1 ]; then
    echo "relay-vs-lab: the relay and the lab disagree (time beyond 10 % or ACKs beyond 20 %)" >&2
    exit 1
fi
