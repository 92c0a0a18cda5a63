#!/bin/sh
# Certificate bootstrap for the compose topology (the `certs` init service):
# creates the federation CA once (kept in its own volume, /ca, which no daemon
# mounts) and issues each daemon's certificate into that daemon's own volume
# /certs/<name>, as `fedmf ca issue` writes it: ca.crt, <name>.crt, <name>.key.
# Idempotent: an existing CA or certificate is kept, so restarts are no-ops.
#
#   fedmf-bootstrap-certs NAME:ROLE ...      e.g. server:server party-a:party
set -eu
CA_DIR=${CA_DIR:-/ca}
OUT_ROOT=${OUT_ROOT:-/certs}
OWNER=${OWNER-10001:10001}  # empty: leave ownership alone (local runs)

if [ ! -f "$CA_DIR/ca.crt" ]; then
  fedmf ca init --dir "$CA_DIR" --federation "${FEDERATION:-fedmf-compose}"
fi
for spec in "$@"; do
  name=${spec%%:*}
  role=${spec#*:}
  out="$OUT_ROOT/$name"
  mkdir -p "$out"
  if [ ! -f "$out/$name.crt" ]; then
    # SANs: NAME only (the compose service name, the host peers dial; the
    # container's own health check dials 127.0.0.1 with --peer-name NAME).
    fedmf ca issue --dir "$CA_DIR" --name "$name" --role "$role" --out "$out"
  fi
  [ -z "$OWNER" ] || chown -R "$OWNER" "$out"
  chmod 0700 "$out"
  chmod 0600 "$out/$name.key"
done
echo "certificates ready: $*"
