#!/usr/bin/env bash
# Throughput against the number of accounts: for each size in SIZES (default "1000 1000000") and
# each mode of MODES (default "tutorial library library:background"; library runs the two-round
# commit), a fresh `serve --in-memory` in its own JVM, warmed up, holds only that run's accounts;
# sizes alternate within each of ROUNDS (default 2) rounds, the second in the opposite order.
# Usage: scripts/bench-accounts.sh [SECONDS]          (build first: mvn -q -DskipTests package)
# Prints one JSON line per run (the bench's own keys, "round", "accounts" and "finish" added) and appends it to OUT
# (default bench-accounts.jsonl, emptied first); progress goes to stderr. THREADS (default 16),
# LATENCY (e.g. 1ms: the server's added round trip), SERVER_WARMUP and CLIENT_WARMUP as in
# bench-side-by-side.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=${JAR:-mongo2pc-cli/target/mongo2pc.jar}
SECONDS_PER_RUN=${1:-10}
SIZES=${SIZES:-1000 1000000}
MODES=${MODES:-tutorial library library:background}
ROUNDS=${ROUNDS:-2}
OUT=${OUT:-bench-accounts.jsonl}
source scripts/bench-common.sh
trap stop_server EXIT
: > "$OUT"
total=$(( ROUNDS * $(wc -w <<< "$SIZES") * $(wc -w <<< "$MODES") ))
done_runs=0
RUN=0
for round in $(seq "$ROUNDS"); do
  sizes=$SIZES
  [ $((round % 2)) = 0 ] && sizes=$(tr ' ' '\n' <<< "$SIZES" | tac | tr '\n' ' ')
  for size in $sizes; do
    for item in $MODES; do
      done_runs=$((done_runs + 1))
      echo "run $done_runs of $total: round $round, $size accounts, $item (a fresh server, warmed up)" >&2
      start_server ${LATENCY:+--latency "$LATENCY"}
      warm_server
      extra=()
      [ "${item%%:*}" = library ] && extra=(--rules 2)
      RUN=$((RUN + 1))
      ACCOUNTS=$size run_bench "$JAR" "$item" "${THREADS:-16}" "$SECONDS_PER_RUN" "\"round\":$round,\"accounts\":$size," \
        "${extra[@]}" | tee -a "$OUT"
      stop_server
    done
  done
done
