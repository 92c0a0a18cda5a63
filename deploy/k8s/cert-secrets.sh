#!/usr/bin/env bash
# Turns federation certificates into Kubernetes Secret manifests, one per
# daemon: Secret fedmf-certs-NAME with the keys ca.crt, NAME.crt and NAME.key,
# which deploy/k8s/base mounts at /certs (the daemons' --cert-dir layout).
#
#   deploy/k8s/cert-secrets.sh [--namespace NS] NAME=DIR [NAME=DIR ...] > secrets.yaml
#   kubectl apply -f secrets.yaml          (or pipe it: ... | kubectl apply -f -)
#
# DIR holds what the CA's tools leave for NAME: ca.crt, NAME.crt, NAME.key —
# `fedmf ca issue --name NAME --out DIR` writes exactly that; with a
# certificate signing request flow the key never leaves its owner's machine,
# and DIR is that machine's directory with the signed NAME.crt and ca.crt put
# next to the key. Before anything is printed, every certificate is checked
# with openssl: it verifies against DIR's ca.crt, its key is NAME.key, and its
# name (subject CN) is NAME; all DIRs must hold the same ca.crt (one
# federation). A failed check prints what to fix and exits 1 with nothing on
# stdout. The output holds private keys: write it where only you can read it,
# and do not commit it.
set -euo pipefail
usage() { sed -n '2,19p' "$0" >&2; exit 2; }
fail() { echo "cert-secrets: $*" >&2; exit 1; }

NAMESPACE=
PAIRS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --namespace) [ $# -ge 2 ] || usage; NAMESPACE=$2; shift 2 ;;
    --namespace=*) NAMESPACE=${1#--namespace=}; shift ;;
    -h | --help) usage ;;
    -*) echo "cert-secrets: unknown option '$1'" >&2; usage ;;
    *=*) PAIRS+=("$1"); shift ;;
    *) echo "cert-secrets: '$1' is not NAME=DIR" >&2; usage ;;
  esac
done
[ ${#PAIRS[@]} -gt 0 ] || usage
command -v openssl > /dev/null || fail "openssl is missing (apt-get install openssl)"
command -v base64 > /dev/null || fail "base64 is missing (coreutils)"
# A DNS-1123 name: Secret names are fedmf-certs-NAME.
name_ok() { [[ $1 =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] && [ ${#1} -le 241 ]; }
[ -z "$NAMESPACE" ] || name_ok "$NAMESPACE" || fail "namespace '$NAMESPACE' is not a DNS-1123 label"

OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
CA_FINGERPRINT=
CA_FROM=
for pair in "${PAIRS[@]}"; do
  name=${pair%%=*}
  dir=${pair#*=}
  name_ok "$name" ||
    fail "'$name' cannot name a Secret (fedmf-certs-$name): lowercase letters, digits and '-'"
  for f in ca.crt "$name.crt" "$name.key"; do
    [ -s "$dir/$f" ] || fail "$dir/$f is missing or empty (expected ca.crt, $name.crt, $name.key: fedmf ca issue --name $name --out $dir)"
  done
  fp=$(openssl x509 -in "$dir/ca.crt" -noout -fingerprint -sha256 2> /dev/null) ||
    fail "$dir/ca.crt is not a PEM certificate"
  if [ -z "$CA_FINGERPRINT" ]; then
    CA_FINGERPRINT=$fp CA_FROM=$dir
  elif [ "$fp" != "$CA_FINGERPRINT" ]; then
    fail "$dir/ca.crt is another CA than $CA_FROM/ca.crt: every daemon of a federation trusts the same CA"
  fi
  openssl verify -CAfile "$dir/ca.crt" "$dir/$name.crt" > /dev/null 2>&1 ||
    fail "$dir/$name.crt does not verify against $dir/ca.crt ($(openssl verify -CAfile "$dir/ca.crt" "$dir/$name.crt" 2>&1 | tail -1))"
  cert_pub=$(openssl x509 -in "$dir/$name.crt" -noout -pubkey)
  key_pub=$(openssl pkey -in "$dir/$name.key" -pubout 2> /dev/null) ||
    fail "$dir/$name.key is not a PEM private key"
  [ "$cert_pub" = "$key_pub" ] || fail "$dir/$name.key is not the key of $dir/$name.crt"
  cn=$(openssl x509 -in "$dir/$name.crt" -noout -subject -nameopt multiline |
       sed -n 's/^ *commonName *= *//p')
  [ "$cn" = "$name" ] || fail "$dir/$name.crt is the certificate of '$cn', not of '$name'"
  {
    echo "---"
    echo "# $name's certificate, key and the federation CA (from $dir)"
    echo "apiVersion: v1"
    echo "kind: Secret"
    echo "metadata:"
    echo "  name: fedmf-certs-$name"
    [ -z "$NAMESPACE" ] || echo "  namespace: $NAMESPACE"
    echo "  labels:"
    echo "    app.kubernetes.io/name: fedmf"
    echo "type: Opaque"
    echo "data:"
    for f in ca.crt "$name.crt" "$name.key"; do
      echo "  $f: $(base64 -w0 < "$dir/$f")"
    done
  } >> "$OUT"
done
cat "$OUT"
