#!/usr/bin/env bash
# Where the server's CPU goes per simple update, by kernel path: starts `serve --in-memory` or
# `serve --data` in its own JVM, warms it up with one unreported BulkWriteCost run (16 threads,
# one $inc by _id per request), then samples the server with `perf record -g` for 10 s inside a
# second run and charges each sample to a category by its stack (fsync, futex, socket and file
# writes, epoll, interrupts, user space). Prints the rate and the server's CPU per update in each.
# Needs perf. Usage: scripts/server-perf-profile.sh in-memory|data [JAR]
# Build first with: mvn -q -DskipTests package
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:?in-memory or data}
JAR=${2:-mongo2pc-cli/target/mongo2pc.jar}
CP="mongo2pc-bench/target/mongo2pc-bench-0.1.0-SNAPSHOT.jar:$(cat mongo2pc-bench/target/classpath.txt)"
WORK=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
if [ "$MODE" = data ]; then ARG="--data $WORK/data"; else ARG=--in-memory; fi
java -XX:+PreserveFramePointer -jar "$JAR" serve $ARG --port "$PORT" > "$WORK/serve.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 50); do grep -q "mongodb://" "$WORK/serve.log" && break; sleep 0.2; done
URI="mongodb://127.0.0.1:$PORT"
java -cp "$CP" io.mongo2pc.bench.embedded.BulkWriteCost "$URI" 16 1 20 simple > /dev/null
java -cp "$CP" io.mongo2pc.bench.embedded.BulkWriteCost "$URI" 16 1 16 simple > "$WORK/rate.out" &
PROBE=$!
sleep 3
perf record -F 999 -g -p "$SERVER" -o "$WORK/perf.data" -- sleep 10 > /dev/null 2>&1
wait $PROBE
perf script -i "$WORK/perf.data" 2> /dev/null > "$WORK/perf.txt"
RATE=$(grep -o '[0-9]* document writes/s' "$WORK/rate.out" | cut -d' ' -f1)
echo "serve --$MODE: $(tr -d '\n' < "$WORK/rate.out")"
python3 - "$WORK/perf.txt" "$RATE" <<'PY'
import collections, sys
path, rate = sys.argv[1], float(sys.argv[2])
counts, total, block = collections.Counter(), 0, []

def charge(lines):
    global total
    if not lines:
        return
    total += 1
    text = ' '.join(lines)
    kernel = len(lines) > 1 and '[kernel.kallsyms]' in lines[1]
    if 'fdatasync' in text or 'vfs_fsync' in text or 'ext4_sync_file' in text:
        key = 'fsync'
    elif kernel and 'irq' in text and 'do_syscall' not in text:
        key = 'interrupts (no system call)'
    elif kernel and 'futex' in text:
        key = 'futex (park, unpark, locks)'
    elif kernel and 'epoll' in text:
        key = 'epoll'
    elif kernel and ('pwrite' in text or 'ksys_write' in text or 'tcp_sendmsg' in text or 'sendto' in text):
        key = 'write (socket replies; with --data also the log)'
    elif kernel and ('recv' in text or 'tcp_recvmsg' in text or 'ksys_read' in text):
        key = 'read (socket requests)'
    elif kernel:
        key = 'kernel, other'
    else:
        key = 'user space (JVM)'
    counts[key] += 1

for line in open(path):
    if line.strip():
        block.append(line)
    else:
        charge(block)
        block = []
charge(block)
seconds = 10.0
print('server CPU: %.2f cores, %.1f us per update' % (total / 999.0 / seconds, total / 999.0 / seconds / rate * 1e6))
for key, n in counts.most_common():
    print('  %-52s %5.1f us  %4.1f%%' % (key, n / 999.0 / seconds / rate * 1e6, 100.0 * n / total))
PY
