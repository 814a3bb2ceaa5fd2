#!/usr/bin/env bash
# Computes the CI-scale FMNIST verification manifests (the selection methods; DM-PFL and
# FedDST under shift) in a throwaway store and checks their expectations (the papers'
# claims and fedpipe's recorded numbers); exits 3 on a mismatch.
# Called by .ci/run after `make test` (which builds bin/fedpipe).
set -euo pipefail
cd "$(dirname "$0")/.."
store=$(mktemp -d)
trap 'rm -rf "$store"' EXIT
./bin/fedpipe verify manifests/ci-fmnist-select.yaml --run --store "$store/store" "$@"
./bin/fedpipe verify manifests/ci-fmnist-dmpfl.yaml --run --store "$store/store" "$@"
