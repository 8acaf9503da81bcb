#!/usr/bin/env bash
# Throughput against added latency. For each latency in LATENCIES (default "0 0.5ms 1ms"): one
# `serve --in-memory --latency L` in its own JVM, warmed up, then raw, tutorial, library and library
# with --finish background side by side, at each thread count of THREADS (default "16 1").
# Usage: scripts/bench-latency.sh [SECONDS]          (build first: mvn -q -DskipTests package)
# Prints one JSON line per run: the bench's own keys with "addedLatencyMs", "finish" and, for the
# library runs of several clients, "client" added; also appended to OUT (default bench-latency.jsonl, emptied
# first). Then draws PLOT_FILE (default bench-latency.png): throughput against added latency, one
# chart per thread count. Progress goes to stderr.
# CLIENTS="new=mongo2pc-cli/target/mongo2pc.jar old=/tmp/old/mongo2pc.jar" runs the library modes (library, interactive)
# with each client in turn against the same server (started from JAR), to compare two builds in one
# run; raw and tutorial, the yardsticks, run with the first client only. A client may carry extra
# bench arguments for its library runs after commas: "n8=mongo2pc.jar,--combined-requests,8".
# ROUNDS, SERVER_WARMUP, CLIENT_WARMUP, MODES and ACCOUNTS as in bench-side-by-side.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=${JAR:-mongo2pc-cli/target/mongo2pc.jar}
SECONDS_PER_RUN=${1:-10}
LATENCIES=${LATENCIES:-0 0.5ms 1ms}
THREADS=${THREADS:-16 1}
MODES=${MODES:-raw tutorial library library:background}
CLIENTS=${CLIENTS:-new=$JAR}
OUT=${OUT:-bench-latency.jsonl}
PLOT_FILE=${PLOT_FILE:-bench-latency.png}
source scripts/bench-common.sh
trap stop_server EXIT
: > "$OUT"
set -- $CLIENTS
several=$(( $# > 1 ))
library_modes=$(tr ' ' '\n' <<< "$MODES" | grep -cE '^(library|interactive)' || true)
total=$(( $(wc -w <<< "$LATENCIES") * ${ROUNDS:-1} * $(wc -w <<< "$THREADS") * ($(wc -w <<< "$MODES") - library_modes + library_modes * $#) ))
done_runs=0
RUN=0
for latency in $LATENCIES; do
  case $latency in
    0) ms=0 ;;
    *ms) ms=${latency%ms} ;;
    *) echo "LATENCIES: write each as 0 or a number of milliseconds such as 0.5ms, not '$latency'" >&2; exit 2 ;;
  esac
  start_server --latency "$latency"
  echo "server with added latency $latency at $URI" >&2
  warm_server
  for round in $(seq "${ROUNDS:-1}"); do
    for t in $THREADS; do
      for item in $MODES; do
        for client in $CLIENTS; do
          label=${client%%=*}
          IFS=, read -r -a spec <<< "${client#*=}"
          jar=${spec[0]}
          extra=("${spec[@]:1}")
          is_library=0
          case ${item%%:*} in library|interactive) is_library=1 ;; esac
          if [ "$is_library" = 0 ]; then
            [ "$client" != "${CLIENTS%% *}" ] && continue # raw and tutorial: the first client only
            extra=()
          fi
          done_runs=$((done_runs + 1))
          echo "run $done_runs of $total: latency $latency, round $round, $t threads, $item, client $label" \
            "(${CLIENT_WARMUP:-30}s warm-up + ${SECONDS_PER_RUN}s)" >&2
          prefix="\"addedLatencyMs\":$ms,"
          [ "$several" = 1 ] && [ "$is_library" = 1 ] && prefix="\"client\":\"$label\",$prefix"
          RUN=$((RUN + 1))
          run_bench "$jar" "$item" "$t" "$SECONDS_PER_RUN" "$prefix" "${extra[@]}" | tee -a "$OUT"
        done
      done
    done
  done
  stop_server
done
java -cp "$JAR" io.mongo2pc.cli.bench.LatencyPlot "$OUT" "$PLOT_FILE" \
  "mongo2pc bench: throughput against added latency (${ACCOUNTS:-1000} accounts, one serve --in-memory)"
echo "plot: $PLOT_FILE" >&2
