#!/usr/bin/env bash
# The main job. Without flags: render the seed's example replica and the pods of its first two
# Instances. With --cluster: build (or reuse) the local control plane, start it with simulated GPU
# nodes, and run the seed's steps against it, then a multi-pod step (a leader + worker gang, its pods
# and PodGroup) (see README).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [[ "${1:-}" == "--cluster" ]]; then
  shift
  exec python3 -m testbed.demo --cluster "$@"
fi
exec omerender render examples/llama-pool.yaml --objects examples/catalog --instances 2
