#!/usr/bin/env bash
# The docker-compose topology as plain processes on loopback, from the same
# config files (deploy/config/*.yaml): only addresses and paths are rewritten
# (service names -> 127.0.0.1, fixed ports -> ephemeral ones read back from
# port files, /certs and /var/lib/fedmf -> the work directory). Certificates
# come from the same bootstrap as the compose `certs` service. The job specs
# (deploy/jobs/*.yaml) are rewritten the same way into WORK_DIR/jobs/.
#
#   deploy/local-cluster.sh start  BIN_DIR WORK_DIR   start server, party-a/b/c,
#                                                      aggregator, device-host
#   deploy/local-cluster.sh health BIN_DIR WORK_DIR   `fedmf health` on every daemon
#   deploy/local-cluster.sh cli    BIN_DIR WORK_DIR ARGS...   fedmf ARGS as the operator
#   deploy/local-cluster.sh stop   BIN_DIR WORK_DIR [NAME...]  stop what `start`
#                                                      started (or only NAMEs)
#
# After `start`, WORK_DIR/env holds SERVER=127.0.0.1:PORT,
# AGGREGATOR=127.0.0.1:PORT and <PARTY>_ADMIN=127.0.0.1:PORT lines,
# WORK_DIR/pids "NAME PID" lines, and WORK_DIR/logs the daemons' logs.
set -euo pipefail
DEPLOY=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 3 ] || { sed -n '2,14p' "$0"; exit 2; }
CMD=$1 BIN=$(cd "$2" && pwd) WORK=$3
shift 3
PARTIES=(party-a party-b party-c)

wait_port() {  # FILE PID: the port a daemon wrote after binding
  for _ in $(seq 300); do
    if [ -s "$1" ]; then cat "$1"; return 0; fi
    kill -0 "$2" 2> /dev/null || { echo "daemon (pid $2) exited; see $WORK/logs" >&2; return 1; }
    sleep 0.1
  done
  echo "timed out waiting for $1" >&2
  return 1
}

# CONFIG NAME [SERVER_PORT]: the compose config with loopback addresses/paths.
rewrite() {
  local port_keys
  sed -e "s#/certs#$WORK/certs/$2#" -e "s#/var/lib/fedmf#$WORK/$2#" \
      -e "s#0\.0\.0\.0:[0-9]*#127.0.0.1:0#" -e "s#server:7443#127.0.0.1:${3:-0}#" "$1"
  if [ "$2" = server ]; then
    port_keys="port_file metrics_port_file"
  else
    port_keys="admin_port_file metrics_port_file"
  fi
  for key in $port_keys; do echo "$key: $WORK/$2.${key%_file}"; done
}

start() {
  [ ! -e "$WORK/pids" ] || { echo "$WORK already runs a cluster (stop it first)" >&2; exit 1; }
  mkdir -p "$WORK/logs" "$WORK/config"
  PATH="$BIN:$PATH" CA_DIR="$WORK/ca" OUT_ROOT="$WORK/certs" OWNER= \
    "$DEPLOY/bootstrap-certs.sh" server:server aggregator:aggregator "${PARTIES[@]/%/:party}" \
    device-host:device operator:operator > "$WORK/logs/certs.log"
  rewrite "$DEPLOY/config/server.yaml" server > "$WORK/config/server.yaml"
  mkdir -p "$WORK/server"
  "$BIN/fedmf-server" --config "$WORK/config/server.yaml" > "$WORK/logs/server.log" 2>&1 &
  echo "server $!" >> "$WORK/pids"
  local port
  port=$(wait_port "$WORK/server.port" "$!")
  wait_port "$WORK/server.metrics_port" "$!" > /dev/null
  echo "SERVER=127.0.0.1:$port" > "$WORK/env"
  echo "SERVER_METRICS=127.0.0.1:$(cat "$WORK/server.metrics_port")" >> "$WORK/env"
  for p in "${PARTIES[@]}"; do
    rewrite "$DEPLOY/config/$p.yaml" "$p" "$port" > "$WORK/config/$p.yaml"
    "$BIN/fedmf-party" --config "$WORK/config/$p.yaml" > "$WORK/logs/$p.log" 2>&1 &
    echo "$p $!" >> "$WORK/pids"
    local admin
    admin=$(wait_port "$WORK/$p.admin_port" "$!")
    echo "$(echo "${p^^}" | tr - _)_ADMIN=127.0.0.1:$admin" >> "$WORK/env"
  done
  # The aggregator and device host: docker-compose.yml's command lines.
  "$BIN/fedmf-aggregator" --listen 127.0.0.1:0 --port-file "$WORK/aggregator.port" \
    --cert-dir "$WORK/certs/aggregator" --name aggregator --log-format json \
    > "$WORK/logs/aggregator.log" 2>&1 &
  echo "aggregator $!" >> "$WORK/pids"
  local agg
  agg=$(wait_port "$WORK/aggregator.port" "$!")
  echo "AGGREGATOR=127.0.0.1:$agg" >> "$WORK/env"
  mkdir -p "$WORK/device-host"
  "$BIN/fedmf-device" --setting lfl,hua-s3 --name device-host --server "127.0.0.1:$port" \
    --server-name server --cert-dir "$WORK/certs/device-host" --aggregator "127.0.0.1:$agg" \
    --devices-from synthetic --first 0 --count 50 \
    --ledger "$WORK/device-host/device-host.ledger.db" --report-metrics --allow-non-private --log-format json \
    > "$WORK/logs/device-host.log" 2>&1 &
  echo "device-host $!" >> "$WORK/pids"
  mkdir -p "$WORK/jobs"
  for job in "$DEPLOY"/jobs/*.yaml; do
    sed "s#aggregator:7445#127.0.0.1:$agg#" "$job" > "$WORK/jobs/$(basename "$job")"
  done
  echo "local cluster up in $WORK:"
  cat "$WORK/env"
}

health() {
  # shellcheck disable=SC1091
  . "$WORK/env"
  local rc=0 addr
  local tls=(--cert-dir "$WORK/certs/operator" --name operator)
  printf 'server: '; "$BIN/fedmf" health "$SERVER" --peer-name server "${tls[@]}" || rc=1
  printf 'aggregator: '
  "$BIN/fedmf" health "$AGGREGATOR" --peer-name aggregator "${tls[@]}" || rc=1
  for p in "${PARTIES[@]}"; do
    addr=$(sed -n "s/^$(echo "${p^^}" | tr - _)_ADMIN=//p" "$WORK/env")
    printf '%s: ' "$p"; "$BIN/fedmf" health "$addr" --peer-name "$p" "${tls[@]}" || rc=1
  done
  return $rc
}

stop() {  # [NAME...]: only those daemons (default: all)
  [ -e "$WORK/pids" ] || return 0
  local pids
  if [ $# -eq 0 ]; then
    pids=$(awk '{print $2}' "$WORK/pids")
  else
    pids=$(awk -v names=" $* " 'index(names, " " $1 " ") {print $2}' "$WORK/pids")
  fi
  # shellcheck disable=SC2086
  kill $pids 2> /dev/null || true
  for pid in $pids; do
    for _ in $(seq 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2> /dev/null || true
  done
  [ $# -ne 0 ] || rm -f "$WORK/pids"
  echo "stopped: $pids"
}

case "$CMD" in
  start) start ;;
  health) health ;;
  cli) exec "$BIN/fedmf" "$@" --cert-dir "$WORK/certs/operator" --name operator ;;
  stop) stop "$@" ;;
  *) echo "unknown command '$CMD' (start|health|cli|stop)" >&2; exit 2 ;;
esac
