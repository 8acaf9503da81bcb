#!/usr/bin/env bash
# CPU per transfer of the library, server and client, for clients side by side against one
# `serve --in-memory` (optionally with --latency LATENCY). CPU time says what throughput cannot
# while other work shares the machine: how much work a transfer costs.
# Usage: scripts/bench-cpu.sh            (build first: mvn -q -DskipTests package)
# CLIENTS (default "new=mongo2pc-cli/target/mongo2pc.jar") as in bench-latency.sh; ROUNDS (default
# 3) repeats them alternating; each run is `bench --threads 16 --transfers TRANSFERS` (default
# 20000) in each mode of MODES (default "library library:background": --finish inline, then
# background; "tutorial" and "raw" run with the first client only). Prints one JSON line per run:
# the server's CPU time per transfer over the run (/proc/PID/stat), and the client JVM's, which
# includes its start and JIT compilation (the same for every client). The server is warmed up first.
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=${JAR:-mongo2pc-cli/target/mongo2pc.jar}
CLIENTS=${CLIENTS:-new=$JAR}
source scripts/bench-common.sh
start_server ${LATENCY:+--latency "$LATENCY"}
trap stop_server EXIT
RUN=0
warm_server
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
out=$(mktemp /tmp/mongo2pc-bench-cpu.XXXXXX)
for round in $(seq "${ROUNDS:-3}"); do
  for client in $CLIENTS; do
    label=${client%%=*}
    IFS=, read -r -a spec <<< "${client#*=}"
    for item in ${MODES:-library library:background}; do
      mode=${item%%:*}
      finish=inline
      extra=()
      if [ "$mode" = library ]; then
        [ "$item" = library:background ] && finish=background
        extra=(--finish "$finish" "${spec[@]:1}")
      elif [ "$client" != "${CLIENTS%% *}" ]; then
        continue # raw and tutorial: the first client only
      fi
      RUN=$((RUN + 1))
      echo "round $round: client $label, $mode, --finish $finish" >&2
      before=$(ticks "$SERVER")
      java -jar "${spec[0]}" --uri "$URI" --db "cpu_${RUN}" bench --mode "$mode" --threads 16 \
        --accounts "${ACCOUNTS:-1000}" --transfers "${TRANSFERS:-20000}" --json "${extra[@]}" > "$out" 2>/dev/null &
      pid=$!
      client_ticks=0
      while kill -0 "$pid" 2>/dev/null; do
        client_ticks=$(ticks "$pid" 2>/dev/null || echo "$client_ticks")
        sleep 0.1
      done
      wait "$pid"
      after=$(ticks "$SERVER")
      python3 - "$label" "$mode" "$finish" "$before" "$after" "$client_ticks" "$hz" "$out" <<'PY'
import json, sys
label, mode, finish, before, after, client, hz, out = sys.argv[1:]
run = json.load(open(out))
n = run["committed"] + run["canceled"]
us = lambda ticks: round(int(ticks) / int(hz) * 1e6 / n)
print(json.dumps({"client": label, "mode": mode, "finish": finish, "tps": run["tps"], "serverUsPerTransfer": us(int(after) - int(before)),
                  "clientUsPerTransfer": us(client)}))
PY
    done
  done
done
rm -f "$out"
