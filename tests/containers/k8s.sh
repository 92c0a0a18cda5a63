#!/usr/bin/env bash
# deploy/k8s for real, under `podman kube play` (Debian 12's podman 4.3):
#   1. kubectl (Debian's kubernetes-client, or any kubectl) checks the
#      manifests offline: `kubectl kustomize deploy/k8s/base` renders what
#      `kubectl apply -k` sends, and `kubectl create --dry-run=client` maps
#      and decodes every object (and the Secrets) against the API groups
#      Kubernetes serves (apps/v1, v1: a discovery cache, no cluster);
#      tests/containers/k8s_check.py checks every field against the
#      Kubernetes API's schema (python3-kubernetes' models) and what the
#      daemons need of the manifests (probes, ConfigMaps equal to
#      deploy/config, the Secrets and claims they mount);
#   2. the image (tests/containers/image.sh: the compose test's image, from
#      this build's binaries when FEDMF_PREBUILT_BIN is set);
#   3. a federation CA (`fedmf ca` in the image) and its certificates as
#      Secrets (deploy/k8s/cert-secrets.sh, whose refusals are checked too);
#   4. deploy/k8s/podman-kube.py plays the rendered manifests on this run's
#      own podman network (StatefulSets as Deployments with their claims,
#      Services as DNS aliases, Secrets as ConfigMaps: its docstring);
#   5. every pod's probes, run as the manifests give them: the liveness probe
#      through `podman healthcheck run`, the readiness probe by `podman exec`;
#   6. an HFL job through the operator pod (fedmf job submit / status), then
#      every party's ledger from its admin endpoint: one charge per round plus
#      the size release, ε within the job's target;
#   7. the server and party-a pods are deleted and played again: the job's
#      record (the server's SQLite) and party-a's ledger come back unchanged
#      from their PersistentVolumeClaims;
#   8. a Hua S3 job (the device host's 50 users through the aggregator);
#   9. teardown of exactly what this run created (pods and volumes named
#      PREFIX-*, its network); the image and base are kept as cache.
# Usage: tests/containers/k8s.sh      (root; FEDMF_PREBUILT_BIN=build/bin: what ctest runs)
set -euo pipefail
main() {
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/fedmf-k8s-XXXXXX)
PREFIX=fedmfk8s$$
NET=$PREFIX
START=$(date +%s)
log() { echo "[k8s +$(( $(date +%s) - START ))s] $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# Debian's python3, with Debian's python3-yaml and python3-kubernetes (a
# python3 earlier in PATH, e.g. pyenv's, may have neither).
PY=/usr/bin/python3
PODMAN_KUBE=("$PY" "$ROOT/deploy/k8s/podman-kube.py")
CHECK=("$PY" "$ROOT/tests/containers/k8s_check.py")

for tool in podman runc kubectl openssl $PY; do
  command -v "$tool" > /dev/null ||
    fail "$tool is missing: apt-get install podman runc kubernetes-client openssl python3 (deploy/install-deps.sh --tests)"
done
$PY -c 'import yaml, kubernetes' 2> /dev/null ||
  fail "$PY's yaml or kubernetes module is missing: apt-get install python3-yaml python3-kubernetes"
[ -x /usr/libexec/podman/catatonit ] || [ -x /usr/bin/catatonit ] ||
  fail "catatonit is missing (podman's pods need it for their infra container): apt-get install catatonit"
[ "$(id -u)" -eq 0 ] || fail "run as root (podman with runc/cgroupfs)"

export CONTAINERS_CONF="$WORK/containers.conf"
cp "$ROOT/tests/containers/containers.conf" "$CONTAINERS_CONF"
PLAYED=

cleanup() {
  local rc=$?
  set +e
  if [ -n "$PLAYED" ]; then
    if [ $rc -ne 0 ]; then
      log "failure: pod logs (tail)"
      for ctr in $(podman ps -a --format '{{.Names}}' | grep "^$PREFIX-" | grep -v -- '-infra$'); do
        echo "--- $ctr ($(podman inspect -f '{{.State.Status}}' "$ctr"))"
        podman logs --tail 15 "$ctr" 2>&1
      done
    fi
    "${PODMAN_KUBE[@]}" down --prefix "$PREFIX"
    podman network rm -f "$NET" > /dev/null 2>&1
    local left
    left=$( (podman pod ls --format '{{.Name}}'; podman volume ls --format '{{.Name}}') | grep -c "^$PREFIX-")
    [ "$left" -eq 0 ] || log "warning: $left pod(s)/volume(s) named $PREFIX-* left behind"
  fi
  rm -rf "$WORK"
  log "done (exit $rc)"
  exit $rc
}
trap cleanup EXIT
trap 'exit 143' INT TERM  # so a killed run still tears down

# ---- 1. the manifests, offline
log "kubectl kustomize deploy/k8s/base ($(kubectl version --client --short 2> /dev/null | head -1 ||
  kubectl version --client | head -1))"
kubectl kustomize "$ROOT/deploy/k8s/base" > "$WORK/fedmf.yaml" || fail "kubectl kustomize deploy/k8s/base"
# kubectl maps every object to its API resource by discovery. Offline, it reads
# discovery from its cache: the groups and kinds Kubernetes serves for what the
# manifests use, written fresh (kubectl trusts a cache younger than 10 min).
# An object of another kind or API version is refused ("no matches for kind").
KCACHE="$WORK/kube-cache"
"${CHECK[@]}" discovery "$KCACHE/discovery/127.0.0.1_9"
kdry() {  # FILE: the objects' names, as `kubectl create --dry-run=client` maps them
  kubectl create --dry-run=client --validate=false -o name -f "$1" \
    --server http://127.0.0.1:9 --cache-dir "$KCACHE" 2> "$WORK/kubectl.err" ||
    { cat "$WORK/kubectl.err" >&2; fail "kubectl create --dry-run=client -f $1"; }
}
kdry "$WORK/fedmf.yaml" > "$WORK/objects"
$PY - "$WORK/objects" << 'PY' || fail "kubectl's objects: $(tr '\n' ' ' < "$WORK/objects")"
import sys
got = sorted(open(sys.argv[1]).read().split())
want = sorted(["configmap/fedmf-server-config", "service/server", "statefulset.apps/server",
               "deployment.apps/aggregator", "service/aggregator", "statefulset.apps/device-host",
               "deployment.apps/operator"] +
              [f % p for p in ("party-a", "party-b", "party-c")
               for f in ("configmap/fedmf-%s-config", "service/%s", "statefulset.apps/%s")])
assert got == want, (got, want)
print("kubectl create --dry-run=client: %d objects" % len(got))
PY
"${CHECK[@]}" manifests "$WORK/fedmf.yaml" "$ROOT/deploy/config" ||
  fail "deploy/k8s/base does not pass tests/containers/k8s_check.py"

# podman-kube.py refuses what it cannot carry, rather than dropping it.
kube_refuses() {  # WHAT EXPECTED_MESSAGE: the YAML on stdin must be refused
  local out
  if out=$("${PODMAN_KUBE[@]}" render - 2>&1); then fail "podman-kube.py rendered $1"; fi
  grep -q "$2" <<< "$out" || fail "podman-kube.py on $1: $out"
}
kube_refuses "a StatefulSet of 2 replicas" "only 1 is carried" << 'EOF'
{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: s}, spec: {replicas: 2, serviceName: s,
 selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: i}]}}}}
EOF
kube_refuses "a Service remapping its port" "targetPort must equal port" << 'EOF'
{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {selector: {a: b}, ports: [{port: 443, targetPort: 7443}]}}
EOF
kube_refuses "an Ingress" "has no Ingress" << 'EOF'
{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: s}, spec: {}}
EOF
log "podman-kube.py: 3 refusals checked"

# ---- 2. the image
"$ROOT/tests/containers/image.sh"
IMAGE=localhost/fedmf:latest

# ---- 3. a federation CA and its certificates, as Secrets
NAMES=(server party-a party-b party-c aggregator device-host operator)
ROLES=(server party party party aggregator device operator)
mkdir -p "$WORK/pki"
issue=("fedmf ca init --dir /pki/ca --federation fedmf-k8s-test > /dev/null")
for i in "${!NAMES[@]}"; do
  issue+=("fedmf ca issue --dir /pki/ca --name ${NAMES[$i]} --role ${ROLES[$i]} --out /pki/${NAMES[$i]} > /dev/null")
done
# Also a certificate of another federation, for cert-secrets.sh to refuse.
issue+=("fedmf ca init --dir /pki/other-ca > /dev/null"
        "fedmf ca issue --dir /pki/other-ca --name party-a --role party --out /pki/other > /dev/null")
podman run --rm --network none --user 0 -v "$WORK/pki:/pki" "$IMAGE" \
  sh -ec "$(IFS=';'; echo "${issue[*]}")" || fail "fedmf ca in the image"
pairs=()
for n in "${NAMES[@]}"; do pairs+=("$n=$WORK/pki/$n"); done
"$ROOT/deploy/k8s/cert-secrets.sh" "${pairs[@]}" > "$WORK/secrets.yaml" || fail "cert-secrets.sh"
refused() {  # WHAT EXPECTED_MESSAGE ARGS...: cert-secrets.sh must refuse, print nothing
  local what=$1 want=$2 out
  shift 2
  if out=$("$ROOT/deploy/k8s/cert-secrets.sh" "$@" 2> "$WORK/refusal"); then
    fail "cert-secrets.sh accepted $what"
  fi
  [ -z "$out" ] || fail "cert-secrets.sh printed manifests while refusing $what"
  grep -q "$want" "$WORK/refusal" || fail "cert-secrets.sh on $what: $(cat "$WORK/refusal")"
}
refused "a certificate under another name" "missing or empty" "party-b=$WORK/pki/party-a"
refused "a certificate of another CA" "another CA" "server=$WORK/pki/server" "party-a=$WORK/pki/other"
cp "$WORK/pki/party-b/party-b.key" "$WORK/pki/other/party-a.key"
refused "a key of another certificate" "is not the key of" "party-a=$WORK/pki/other"
kdry "$WORK/secrets.yaml" > "$WORK/secret-objects"
[ "$(sort "$WORK/secret-objects" | tr '\n' ' ')" = "$(printf 'secret/fedmf-certs-%s\n' "${NAMES[@]}" | sort | tr '\n' ' ')" ] ||
  fail "kubectl's Secrets: $(cat "$WORK/secret-objects")"
"${CHECK[@]}" secrets "$WORK/secrets.yaml" "$WORK/pki" "${NAMES[@]}" ||
  fail "the Secrets do not hold the issued certificates"
log "certificates: ${#NAMES[@]} Secrets (cert-secrets.sh), 3 refusals checked"

# ---- 4. play
podman network create "$NET" > /dev/null || fail "podman network create $NET"
PLAYED=1
log "podman-kube.py play --network $NET --prefix $PREFIX"
"${PODMAN_KUBE[@]}" play --network "$NET" --prefix "$PREFIX" "$WORK/fedmf.yaml" "$WORK/secrets.yaml" ||
  fail "podman-kube.py play"

# ---- 5. probes, as the manifests give them
"${CHECK[@]}" probes "$WORK/fedmf.yaml" > "$WORK/probes"
wait_healthy() {  # WORKLOAD...: every probe of their containers passes
  local workload ctr kind cmd ok
  for workload in "$@"; do
    while IFS=$'\t' read -r w container kind cmd; do
      [ "$w" = "$workload" ] || continue
      ctr="$PREFIX-$w-pod-0-$container"
      ok=
      for _ in $(seq 90); do
        [ "$(podman inspect -f '{{.State.Running}}' "$ctr" 2> /dev/null)" = true ] ||
          { podman logs --tail 20 "$ctr" 2>&1; fail "$ctr is not running"; }
        # (< /dev/null: podman must not read the probe list this loop reads.)
        if [ "$kind" = liveness ]; then
          # podman made the liveness probe the container's health check.
          podman healthcheck run "$ctr" < /dev/null > /dev/null 2>&1 && ok=1
        elif [ "$kind" = none ]; then
          ok=1  # running is all there is (no port: the device host, the CLI)
        else
          # readiness, startup: podman 4.3 ignores them; run them as kubelet would.
          eval "podman exec $ctr $cmd" < /dev/null > /dev/null 2>&1 && ok=1
        fi
        [ -n "$ok" ] && break
        sleep 1
      done
      [ -n "$ok" ] || fail "$ctr: its $kind probe never passed ($cmd)"
      if [ "$kind" = none ]; then log "$w: running (no port, no probe)"; else log "$w: $kind probe passes"; fi
    done < "$WORK/probes"
  done
}
WORKLOADS=(server party-a party-b party-c aggregator device-host operator)
wait_healthy "${WORKLOADS[@]}"

# ---- 6. an HFL job, its ledgers
OPERATOR="$PREFIX-operator-pod-0-cli"
cli() { podman exec "$OPERATOR" fedmf "$@" --cert-dir /certs --name operator; }
. "$ROOT/tests/containers/wait_job.sh"
out=$(cli job submit --server server:7443 --spec /etc/fedmf/jobs/hfl.yaml) || fail "submit: $out"
log "$out"
status=$(wait_job hfl-demo)
log "hfl-demo finished"
$PY "$ROOT/tests/containers/check_hfl.py" status "$ROOT/deploy/jobs/hfl.yaml" "$status" ||
  fail "HFL job result: $status"
ledgers() {  # -> one JSON ledger per party in $WORK/ledger-PARTY.json
  for party in party-a party-b party-c; do
    cli ledger --party "$party:7444" --party-name "$party" --json > "$WORK/ledger-$party.json" ||
      fail "ledger $party: $(cat "$WORK/ledger-$party.json")"
  done
}
ledgers
for party in party-a party-b party-c; do
  $PY "$ROOT/tests/containers/check_hfl.py" ledger "$ROOT/deploy/jobs/hfl.yaml" "$party" \
    "$(cat "$WORK/ledger-$party.json")" ||
    fail "ledger $party: $(cat "$WORK/ledger-$party.json")"
  cp "$WORK/ledger-$party.json" "$WORK/ledger-$party.before.json"
done

# ---- 7. state survives its pods: delete server and party-a, play them again
log "deleting the server and party-a pods; playing them again"
podman pod rm -f -t 10 "$PREFIX-server-pod-0" "$PREFIX-party-a-pod-0" > "$WORK/rm.log" 2>&1 ||
  { cat "$WORK/rm.log"; fail "podman pod rm"; }
"${PODMAN_KUBE[@]}" play --network "$NET" --prefix "$PREFIX" --only "$PREFIX-server" \
  --only "$PREFIX-party-a" "$WORK/fedmf.yaml" "$WORK/secrets.yaml" || fail "podman-kube.py play --only"
wait_healthy server party-a
again=$(wait_job hfl-demo)
$PY - "$status" "$again" << 'PY' || fail "the job's record after the server's restart: $again"
import json, sys
before, after = (json.loads(a) for a in sys.argv[1:3])
keys = ("state", "rounds_completed", "rounds_total")
assert [before[k] for k in keys] == [after[k] for k in keys], (before, after)
eps = lambda st: sorted((p["name"], p["epsilon"]) for p in st["parties"])
assert eps(before) == eps(after), (eps(before), eps(after))
print("server restarted: hfl-demo still", after["state"], after["rounds_completed"], "rounds")
PY
ledgers
cmp -s <(python3 -m json.tool --sort-keys "$WORK/ledger-party-a.before.json") \
       <(python3 -m json.tool --sort-keys "$WORK/ledger-party-a.json") ||
  fail "party-a's ledger changed across its pod's restart: $(cat "$WORK/ledger-party-a.before.json") -> $(cat "$WORK/ledger-party-a.json")"
log "party-a restarted: its ledger is unchanged ($(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["entries"]))' "$WORK/ledger-party-a.json") charges)"

# ---- 8. a Hua S3 job: the device host's users through the aggregator
out=$(cli job submit --server server:7443 --spec /etc/fedmf/jobs/hua-s3.yaml) || fail "submit: $out"
log "$out"
status=$(wait_job hua-s3-demo)
ctr="$PREFIX-device-host-pod-0-device-host"
podman logs "$ctr" 2>&1 | grep -q "hua-s3 job 'hua-s3-demo' done: 50 users" ||
  { podman logs --tail 20 "$ctr"; fail "device-host did not log the Hua job's result"; }
ctr="$PREFIX-aggregator-pod-0-aggregator"
podman stop -t 10 "$ctr" > "$WORK/stop.log" 2>&1 || { cat "$WORK/stop.log"; fail "podman stop $ctr"; }
agg_line=$(podman logs "$ctr" 2>&1 | grep 'shutting down:') ||
  { podman logs --tail 20 "$ctr"; fail "no aggregator shutdown line"; }
python3 "$ROOT/tests/containers/check_hua.py" "$ROOT/deploy/jobs/hua-s3.yaml" "$status" \
  "$agg_line" || fail "Hua S3 job result: $status / $agg_line"
log "PASS"
}
main "$@"
