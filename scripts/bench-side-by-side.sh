#!/usr/bin/env bash
# Library vs tutorial vs raw, side by side in one run against one `serve --in-memory` in its own JVM
# Usage: scripts/bench-side-by-side.sh [SECONDS] [THREADS...]
# Prints one JSON line per run; build first with: mvn -q -DskipTests package
# The fresh server is first warmed up by every mode for SERVER_WARMUP seconds (default 8, not
# reported: its JIT would otherwise favour whichever mode runs last); ROUNDS (default 1) repeats
# the measured runs, alternating the modes, so a drift of the machine shows. CLIENT_WARMUP
# (default 30) is each run's own unmeasured warm-up in seconds: with 10 s the client JVM's JIT was
# still speeding the tutorial up (docs/BENCHMARKS.md, "Steady state"). MODES (default
# "raw tutorial library library:background") lists the runs of a round; ":background" runs the
# library with --finish background.
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=mongo2pc-cli/target/mongo2pc.jar
SECONDS_PER_RUN=${1:-10}
shift || true
THREADS=${*:-16}
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
java -jar "$JAR" serve --in-memory --port "$PORT" > /tmp/mongo2pc-bench-serve.log 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q "mongodb://" /tmp/mongo2pc-bench-serve.log && break; sleep 0.2; done
URI="mongodb://127.0.0.1:$PORT"
run=0
if [ "${SERVER_WARMUP:-8}" != 0 ]; then
  for mode in raw tutorial library; do
    run=$((run + 1))
    echo "warming the server up: $mode for ${SERVER_WARMUP:-8}s (not reported)" >&2
    java -jar "$JAR" --uri "$URI" --db "bench_${run}_${mode}" bench --mode "$mode" --threads 16 \
      --accounts "${ACCOUNTS:-1000}" --duration "${SERVER_WARMUP:-8}s" --json > /dev/null 2>&1
  done
fi
for round in $(seq "${ROUNDS:-1}"); do
  for t in $THREADS; do
    for item in ${MODES:-raw tutorial library library:background}; do
      mode=${item%%:*}
      finish=inline
      [ "$item" != "$mode" ] && finish=${item#*:}
      run=$((run + 1))
      # The bench's JSON is the CLI contract; the script adds "finish" to tell the two library runs apart.
      java -jar "$JAR" --uri "$URI" --db "bench_${run}_${mode}" bench --mode "$mode" --threads "$t" --finish "$finish" \
        --accounts "${ACCOUNTS:-1000}" --duration "${SECONDS_PER_RUN}s" --warmup "${CLIENT_WARMUP:-30}s" --json \
        ${PLOT:+--plot "bench-$mode-$finish-$t.png"} 2>/dev/null | sed "s/^{/{\"finish\":\"$finish\",/"
    done
  done
done
