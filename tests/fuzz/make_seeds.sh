#!/usr/bin/env bash
# Writes the binary seed inputs of the structured targets (framed protobuf,
# see fuzz_input.h) into tests/fuzz/corpus/; run after a proto change.
#   tests/fuzz/make_seeds.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
enc() { protoc --encode="fedmf.v1.$1" -I proto "proto/fedmf/v1/$2"; }
# Prints a [u16 little-endian length][bytes] record of stdin.
frame() { python3 -c 'import sys; b = sys.stdin.buffer.read(); sys.stdout.buffer.write(len(b).to_bytes(2, "little") + b)'; }
byte() { printf "\\x$(printf %02x "$1")"; }

# A 2x3 matrix in chunks of at most 4 values (shape byte 1 + 2*8 -> 2x3, chunk byte 3 -> 4).
d=tests/fuzz/corpus/matrix_chunks; mkdir -p $d
sha=$(python3 -c 'import hashlib, struct; print("".join("\\x%02x" % c for c in hashlib.sha256(struct.pack("<6d", 1, 2, 3, 4, 5, 6.5)).digest()))')
{ byte 17; byte 3
  echo "header { job_id: \"job\" round: 3 rows: 2 cols: 3 total_chunks: 2 sha256: \"$sha\" }" | enc MatrixChunk federation.proto | frame
  echo 'index: 0 values: [1, 2, 3, 4]' | enc MatrixChunk federation.proto | frame
  echo 'index: 1 values: [5, 6.5]' | enc MatrixChunk federation.proto | frame
} > $d/upload-2x3
# The same matrix as fedmf sends it: float32 (encoding 1), checksum over 4-byte values.
sha=$(python3 -c 'import hashlib, struct; print("".join("\\x%02x" % c for c in hashlib.sha256(struct.pack("<6f", 1, 2, 3, 4, 5, 6.5)).digest()))')
{ byte 17; byte 3
  echo "header { job_id: \"job\" round: 3 rows: 2 cols: 3 total_chunks: 2 sha256: \"$sha\" encoding: VALUE_ENCODING_FLOAT32 }" | enc MatrixChunk federation.proto | frame
  echo 'index: 0 values_f32: [1, 2, 3, 4]' | enc MatrixChunk federation.proto | frame
  echo 'index: 1 values_f32: [5, 6.5]' | enc MatrixChunk federation.proto | frame
} > $d/upload-2x3-float32

# The adversary (device 50) advertising keys, then a short masked input.
d=tests/fuzz/corpus/secagg_messages; mkdir -p $d
key=$(python3 -c 'print("\\x07" * 32)')
{ byte 63; byte 1
  echo "device: 50 advertise_keys { c_pk: \"$key\" s_pk: \"$key\" }" | enc DeviceMessage device.proto | frame
  byte 0; byte 1
  echo 'device: 50 masked_input { masked: "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c" }' | enc DeviceMessage device.proto | frame
  byte 0; byte 0
} > $d/adversary-advertises
# No adversary at all: the honest aggregation completes.
printf '\x3e\x00\x00\x00\x00' > $d/honest-only

# A plan for item 4 (users 1 and 2 on host h), both reports, then a forward.
d=tests/fuzz/corpus/hua_reports; mkdir -p $d
{ echo 'job_id: "j" phase: HUA_PHASE_ITERATION round: 1 dim: 2 items { item: 4 users: [1, 2] } users { user: 1 host: "h" } users { user: 2 host: "h" }' | enc HuaPlan hua.proto | frame
  byte 1
  echo 'host: "h" job_id: "j" phase: HUA_PHASE_ITERATION round: 1 reports { user: 1 items { item: 4 value: [5, 6] } } reports { user: 2 items { item: 4 value: [7, 8] } }' | enc HuaReportBatch hua.proto | frame
  echo 'job_id: "j" phase: HUA_PHASE_ITERATION round: 1 items { item: 4 contributors: 2 sum: [12, 14] }' | enc HuaForward hua.proto
} > $d/plan-two-reports

d=tests/fuzz/corpus/server_config; mkdir -p $d
cp deploy/config/server.yaml $d/server.yaml
