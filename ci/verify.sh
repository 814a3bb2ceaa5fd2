#!/usr/bin/env bash
# Computes the CI-scale FMNIST verification manifests (the selection methods; DM-PFL and
# FedDST under shift) in a throwaway store and checks their expectations (the papers'
# claims and fedpipe's recorded numbers); exits 3 on a mismatch.
# Called by .ci/run after `make test` (which builds bin/fedpipe). With $FEDPIPE_CI_STORE set
# (.ci/run sets it) it uses that store, where cmd/fedpipe's TestCISelectionManifest has
# already computed ci-fmnist-select.yaml: the same keys, so those runs are read, not
# trained again; only what is missing runs.
set -euo pipefail
cd "$(dirname "$0")/.."
store=${FEDPIPE_CI_STORE:-}
if [ -z "$store" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	store=$tmp/store
fi
./bin/fedpipe verify manifests/ci-fmnist-select.yaml --run --store "$store" "$@"
./bin/fedpipe verify manifests/ci-fmnist-dmpfl.yaml --run --store "$store" "$@"
