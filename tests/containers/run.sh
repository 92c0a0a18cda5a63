#!/usr/bin/env bash
# The compose topology for real, under podman as the Docker engine:
#   1. `docker-compose config` validates docker-compose.yml;
#   2. the image, by tests/containers/image.sh (shared with the Kubernetes
#      test, tests/containers/k8s.sh: a debootstrap base cached between runs,
#      this build's binaries with FEDMF_PREBUILT_BIN), tagged fedmf:latest;
#   3. `podman system service` on this run's own socket, DOCKER_HOST at it;
#   4. `docker-compose up -d` of that image (server, three parties, the
#      aggregator and the device host: profiles aggregator and devices);
#   5. every daemon's compose health check (`fedmf health`) reports SERVING;
#   6. an HFL job runs to completion (job status via the `cli` service), and
#      every party's ledger shows its spend within the job's ε
#      (tests/containers/check_hfl.py, shared with the Kubernetes test);
#   7. a Hua S3 job (deploy/jobs/hua-s3.yaml: the device host's 50 users,
#      masked reports through the aggregator) runs to completion; its
#      iterations, test error and the aggregator's report counts are checked
#      (tests/containers/check_hua.py, shared with the local-cluster test);
#   8. teardown of exactly what this run created (its compose project with
#      its volumes, its podman service); the image and base are kept as cache.
# Usage: tests/containers/run.sh        (root; the image compiles the project:
#          ~20 min cold on 2 cores, less when its build cache is warm)
#        FEDMF_PREBUILT_BIN=build/bin tests/containers/run.sh
#          (the image takes the host's Release binaries; what ctest runs;
#          a layer-cache hit when the Kubernetes test built it already)
set -euo pipefail
# All in main(): bash reads a script as it runs, so an edit during a run
# must not change what this run executes.
main() {
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/fedmf-containers-XXXXXX)
PROJECT=fedmfct$$
START=$(date +%s)
log() { echo "[containers +$(( $(date +%s) - START ))s] $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

for tool in podman runc docker-compose debootstrap; do
  command -v "$tool" > /dev/null ||
    fail "$tool is missing: apt-get install podman runc docker-compose debootstrap (deploy/install-deps.sh --tests)"
done
[ -x /usr/lib/cni/dnsname ] ||
  fail "the CNI dnsname plugin is missing (compose services find each other by name): apt-get install golang-github-containernetworking-plugin-dnsname"
[ "$(id -u)" -eq 0 ] || fail "run as root (podman system service with runc/cgroupfs)"

export CONTAINERS_CONF="$WORK/containers.conf"
cp "$ROOT/tests/containers/containers.conf" "$CONTAINERS_CONF"
export DOCKER_HOST="unix://$WORK/podman.sock"
export COMPOSE_PROJECT_NAME=$PROJECT
export COMPOSE_FILE="$ROOT/docker-compose.yml"
export COMPOSE_HTTP_TIMEOUT=600
export COMPOSE_PROFILES=aggregator,devices  # the whole topology
SERVICE_PID=
compose() { docker-compose --project-directory "$ROOT" "$@"; }

cleanup() {
  local rc=$?
  set +e
  if [ -n "$SERVICE_PID" ]; then
    if [ $rc -ne 0 ]; then
      log "failure: daemon logs (tail)"
      compose logs --no-color --tail 30 2>&1 | tail -150
    fi
    compose --profile tools --profile aggregator --profile devices \
      down -v --remove-orphans --timeout 5 > "$WORK/down.log" 2>&1 || cat "$WORK/down.log"
    # A container in a restart loop can escape `down`: remove this project's
    # leftovers by label (only ours), then its network and volumes.
    left=$(podman ps -a -q --filter "label=com.docker.compose.project=$PROJECT")
    if [ -n "$left" ]; then
      log "removing $(echo "$left" | wc -l) leftover container(s) of $PROJECT"
      # shellcheck disable=SC2086
      podman rm -f $left > /dev/null
      compose --profile tools --profile aggregator --profile devices \
        down -v --remove-orphans --timeout 5 > "$WORK/down.log" 2>&1 || cat "$WORK/down.log"
    fi
    left=$(podman ps -a -q --filter "label=com.docker.compose.project=$PROJECT" | wc -l)
    [ "$left" -eq 0 ] || log "warning: $left containers of $PROJECT left behind"
    # `down` has left the network and volumes behind at least once (exit 0):
    # remove what still carries this project's label.
    local label="label=com.docker.compose.project=$PROJECT" vols nets
    vols=$(podman volume ls -q --filter "$label")
    nets=$(podman network ls -q --filter "$label")
    if [ -n "$vols$nets" ]; then
      log "down left $(echo $vols | wc -w) volume(s), $(echo $nets | wc -w) network(s); removing"
      tail -5 "$WORK/down.log"
      # shellcheck disable=SC2086
      [ -z "$vols" ] || podman volume rm -f $vols > /dev/null
      # shellcheck disable=SC2086
      [ -z "$nets" ] || podman network rm -f $nets > /dev/null
    fi
    kill "$SERVICE_PID" 2> /dev/null
    wait "$SERVICE_PID" 2> /dev/null
  fi
  rm -rf "$WORK"
  log "done (exit $rc)"
  exit $rc
}
trap cleanup EXIT
trap 'exit 143' INT TERM  # so a killed run still tears down

log "docker-compose config"
compose config -q || fail "docker-compose.yml does not validate"

# ---- the image (fedmf:latest): built once for both container tests
"$ROOT/tests/containers/image.sh" || fail "tests/containers/image.sh"

# ---- the Docker API, on this run's own socket
podman system service --time=0 "$DOCKER_HOST" > "$WORK/podman-service.log" 2>&1 &
SERVICE_PID=$!
for _ in $(seq 100); do
  [ -S "$WORK/podman.sock" ] && break
  kill -0 "$SERVICE_PID" 2> /dev/null || { cat "$WORK/podman-service.log"; fail "podman system service exited"; }
  sleep 0.1
done
[ -S "$WORK/podman.sock" ] || fail "podman socket did not appear"

SERVICES=(server party-a party-b party-c aggregator device-host)
# All six at once: the device host may dial before the server listens and
# must join within seconds of it (it once stayed unconnected for minutes:
# docs/security.md, "Reconnecting to a server that was away").
log "docker-compose up (${SERVICES[*]})"
if ! compose up -d --no-build "${SERVICES[@]}" > "$WORK/up.log" 2>&1; then
  # Podman's Docker API can lose a race with the one-shot certs container,
  # which exits within a second: "read /proc/PID/cgroup: no such process"
  # (seen once in CI; the same code had passed 20 minutes earlier). Nothing
  # of ours failed, and up is idempotent (created containers are reused, the
  # certs job keeps what it issued), so that one error gets one more try.
  grep -q 'cgroup: no such process' "$WORK/up.log" ||
    { tail -60 "$WORK/up.log"; fail "docker-compose up failed"; }
  log "podman lost a race with an exited container; docker-compose up once more"
  mv "$WORK/up.log" "$WORK/up.first.log"
  compose up -d --no-build "${SERVICES[@]}" > "$WORK/up.log" 2>&1 ||
    { tail -60 "$WORK/up.first.log" "$WORK/up.log"; fail "docker-compose up failed"; }
fi
log "up"

# ---- health: run each service's own compose health check until it passes.
# (Podman schedules health checks with systemd timers, absent here, so the
# test runs them itself: the same command docker would run.)
for svc in "${SERVICES[@]}"; do
  [ "$svc" = device-host ] && continue  # dials out; no listening port
  ctr=$(compose ps -q "$svc")
  [ -n "$ctr" ] || fail "no container for $svc"
  ok=
  for attempt in $(seq 60); do
    if podman healthcheck run "$ctr" > /dev/null 2>&1; then ok=1; break; fi
    [ "$(podman inspect -f '{{.State.Running}}' "$ctr")" = true ] ||
      { podman logs --tail 20 "$ctr"; fail "$svc is not running"; }
    sleep 1
  done
  [ -n "$ok" ] || fail "$svc never became healthy"
  state=$(podman inspect -f '{{.State.Health.Status}}' "$ctr")
  [ "$state" = healthy ] || fail "$svc health state '$state' after a passing check"
  log "$svc: healthy (fedmf health -> SERVING)"
done


# ---- one HFL job through the operator CLI
cli() { compose run --rm -T cli fedmf "$@" --cert-dir /certs --name operator; }
. "$ROOT/tests/containers/wait_job.sh"
out=$(cli job submit --server server:7443 --spec /etc/fedmf/jobs/hfl.yaml) || fail "submit: $out"
log "$out"
status=$(wait_job hfl-demo)
python3 "$ROOT/tests/containers/check_hfl.py" status "$ROOT/deploy/jobs/hfl.yaml" "$status" ||
  fail "HFL job result: $status"
for party in party-a party-b party-c; do
  ledger=$(compose run --rm -T cli fedmf ledger --party "$party:7444" --party-name "$party" \
             --cert-dir /certs --name operator --json) || fail "ledger $party: $ledger"
  python3 "$ROOT/tests/containers/check_hfl.py" ledger "$ROOT/deploy/jobs/hfl.yaml" "$party" "$ledger" ||
    fail "ledger $party: $ledger"
done

# ---- one Hua S3 job: the device host's users, the aggregator, the server
out=$(cli job submit --server server:7443 --spec /etc/fedmf/jobs/hua-s3.yaml) || fail "submit: $out"
log "$out"
status=$(wait_job hua-s3-demo)
# The device host dials out and serves no port: it must still be running
# (it serves the next job), and it logged its users' result.
ctr=$(compose ps -q device-host)
[ "$(podman inspect -f '{{.State.Running}}' "$ctr")" = true ] ||
  { podman logs --tail 20 "$ctr"; fail "device-host is not running"; }
podman logs "$ctr" 2>&1 | grep -q "hua-s3 job 'hua-s3-demo' done: 50 users" ||
  { podman logs --tail 20 "$ctr"; fail "device-host did not log the Hua job's result"; }
log "device-host: running, Hua job done"
# The aggregator's own count of the reports it accepted: its shutdown line.
ctr=$(compose ps -q aggregator)
compose stop --timeout 10 aggregator > /dev/null 2>&1 || fail "docker-compose stop aggregator"
agg_line=$(podman logs "$ctr" 2>&1 | grep 'shutting down:') ||
  { podman logs --tail 20 "$ctr"; fail "no aggregator shutdown line"; }
python3 "$ROOT/tests/containers/check_hua.py" "$ROOT/deploy/jobs/hua-s3.yaml" "$status" \
  "$agg_line" || fail "Hua S3 job result: $status / $agg_line"
log "PASS"
}
main "$@"
