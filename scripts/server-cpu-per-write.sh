#!/usr/bin/env bash
# Server CPU time per document write: starts `serve --in-memory` in its own JVM, warms it up with
# one unreported run of BulkWriteCost, then runs it again and reads the server's CPU time
# (/proc/PID/stat) over 12 s inside the measured window.
# Usage: scripts/server-cpu-per-write.sh [simple|library] [WRITES_PER_REQUEST] [JAR]
# Build first with: mvn -q -DskipTests package
set -euo pipefail
cd "$(dirname "$0")/.."
SHAPE=${1:-library}
PER_REQUEST=${2:-16}
JAR=${3:-mongo2pc-cli/target/mongo2pc.jar}
CP="mongo2pc-bench/target/mongo2pc-bench-0.1.0-SNAPSHOT.jar:$(cat mongo2pc-bench/target/classpath.txt)"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
java -jar "$JAR" serve --in-memory --port "$PORT" > /tmp/mongo2pc-cpu-per-write.log 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q "mongodb://" /tmp/mongo2pc-cpu-per-write.log && break; sleep 0.2; done
URI="mongodb://127.0.0.1:$PORT"
java -cp "$CP" io.mongo2pc.bench.embedded.BulkWriteCost "$URI" 16 "$PER_REQUEST" 12 "$SHAPE" > /dev/null
java -cp "$CP" io.mongo2pc.bench.embedded.BulkWriteCost "$URI" 16 "$PER_REQUEST" 16 "$SHAPE" > /tmp/mongo2pc-cpu-per-write.out &
PROBE=$!
sleep 9
read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$SERVER/stat")
sleep 12
read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$SERVER/stat")
wait $PROBE
RATE=$(grep -o '[0-9]* document writes/s' /tmp/mongo2pc-cpu-per-write.out | cut -d' ' -f1)
TICK=$(getconf CLK_TCK)
python3 -c "print('$(cat /tmp/mongo2pc-cpu-per-write.out | tr -d '\n'); server CPU %.1f us per document write' % ((($u1-$u0)+($s1-$s0))/$TICK*1e6/(12*$RATE)))"
