# Shared by the bench scripts (source it): one `serve` in its own JVM, its warm-up, one bench run.
# Build first with: mvn -q -DskipTests package

# Starts `serve --in-memory --port P EXTRA...` from $JAR; sets SERVER (its pid) and URI.
start_server() {
  local port log
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  log=$(mktemp /tmp/mongo2pc-bench-serve.XXXXXX)
  java -jar "$JAR" serve --in-memory --port "$port" "$@" > "$log" 2>&1 &
  SERVER=$!
  for _ in $(seq 100); do grep -q "mongodb://" "$log" && break; sleep 0.2; done
  grep -q "mongodb://" "$log" || { cat "$log" >&2; echo "the server did not start" >&2; exit 1; }
  URI="mongodb://127.0.0.1:$port"
}

stop_server() {
  [ -n "${SERVER:-}" ] || return 0
  kill "$SERVER" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
  SERVER=
}

# Warms the fresh server up with every mode for SERVER_WARMUP seconds (default 8, not reported):
# its JIT would otherwise favour whichever mode runs last. Uses and advances RUN (database names).
warm_server() {
  [ "${SERVER_WARMUP:-8}" = 0 ] && return
  for mode in raw tutorial library; do
    RUN=$((RUN + 1))
    echo "warming the server up: $mode for ${SERVER_WARMUP:-8}s (not reported)" >&2
    java -jar "$JAR" --uri "$URI" --db "bench_${RUN}_${mode}" bench --mode "$mode" --threads 16 \
      --accounts "${ACCOUNTS:-1000}" --duration "${SERVER_WARMUP:-8}s" --json > /dev/null 2>&1
  done
}

# run_bench CLIENT_JAR ITEM THREADS SECONDS PREFIX [BENCH_ARG...]: one measured `bench --json` against $URI, in a
# database named after RUN (advance it before each call: this may run in a pipeline's subshell);
# ITEM is a mode, or library:background for --finish background. Prints its JSON line with PREFIX
# (e.g. "addedLatencyMs":1,) and "finish" added in front (the bench's own keys are the CLI contract).
run_bench() {
  local jar=$1 item=$2 threads=$3 seconds=$4 prefix=$5 mode finish
  shift 5
  mode=${item%%:*}
  finish=inline
  [ "$item" != "$mode" ] && finish=${item#*:}
  # The library's runs follow its defaults (the two-round commit) unless the client's arguments choose (--rules 1).
  java -jar "$jar" --uri "$URI" --db "bench_${RUN}_${mode}" bench --mode "$mode" --threads "$threads" --finish "$finish" \
    --accounts "${ACCOUNTS:-1000}" --duration "${seconds}s" --warmup "${CLIENT_WARMUP:-30}s" --json \
    ${PLOT:+--plot "bench-$mode-$finish-$threads.png"} "$@" 2>/dev/null | sed "s/^{/{${prefix}\"finish\":\"$finish\",/"
}
