#!/usr/bin/env bash
# Library vs tutorial vs raw, side by side in one run against one `serve --in-memory` in its own JVM.
# Usage: scripts/bench-side-by-side.sh [SECONDS] [THREADS...]
# Prints one JSON line per run; build first with: mvn -q -DskipTests package
# The fresh server is first warmed up by every mode for SERVER_WARMUP seconds (default 8, not
# reported: its JIT would otherwise favour whichever mode runs last); ROUNDS (default 1) repeats
# the measured runs, alternating the modes, so a drift of the machine shows. CLIENT_WARMUP
# (default 30) is each run's own unmeasured warm-up in seconds: with 10 s the client JVM's JIT was
# still speeding the tutorial up (docs/BENCHMARKS.md, "How it is measured"). MODES (default
# "raw tutorial library library:background") lists the runs of a round; ":background" runs the
# library with --finish background. LATENCY (default none) is passed to `serve --latency`.
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=${JAR:-mongo2pc-cli/target/mongo2pc.jar}
SECONDS_PER_RUN=${1:-10}
shift || true
THREADS=${*:-16}
source scripts/bench-common.sh
start_server ${LATENCY:+--latency "$LATENCY"}
trap stop_server EXIT
RUN=0
warm_server
for round in $(seq "${ROUNDS:-1}"); do
  for t in $THREADS; do
    for item in ${MODES:-raw tutorial library library:background}; do
      RUN=$((RUN + 1))
      run_bench "$JAR" "$item" "$t" "$SECONDS_PER_RUN" ""
    done
  done
done
