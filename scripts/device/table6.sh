#!/bin/bash
# Runs paper-scale cells of one manifest on the GPU (default: FedOBP's Table 6 FMNIST Dir(0.1)
# column, every method; ONLY=fedavg for one) for at most BUDGET seconds (default 500), seed 0
# first, then brings back what finished:
#   $OUT/table6.txt           progress, ls, verify
#   $OUT/table6-tables.tar.xz every finished table as CSV and Parquet
#   $OUT/table6-kept.tar.xz   the results-only push of what finished (a directory remote: what
#                             reproduced/ keeps; `fedpipe pull --remote` reads it)
# M, ONLY, SEEDS and BACKEND (default xla:cuda) may be set; with BACKEND=fpfast it runs on a CPU.
set -uo pipefail
. "$(dirname "$0")/common.sh"
BACKEND=${BACKEND:-xla:cuda}
BUDGET=${BUDGET:-500}
SEEDS=${SEEDS:-[0]}
M=${M:-manifests/fedobp-table6-fmnist-dir01.yaml}
S=${WORK:-/tmp/table6}
sel=(-S "seeds=$SEEDS" --backend "$BACKEND" --store "$S/store")
[ -n "${ONLY:-}" ] && sel+=(--only "$ONLY")
rm -rf "$S" && mkdir -p "$S"
{
	echo "=== $M ${ONLY:-all methods} seeds=$SEEDS on $BACKEND for at most ${BUDGET}s ($(date -u +%T))"
	# SIGINT at the budget: fedpipe stops at the next round, keeps finished stages and checkpoints.
	timeout -s INT "$BUDGET" "$F" run "$M" "${sel[@]}"
	echo "run exit $? ($(date -u +%T))"
	"$F" ls "$M" "${sel[@]}" --evals
	"$F" verify "$M" "${sel[@]}"
	"$F" export "$M" "${sel[@]}" --format csv,parquet -o "$S/table6-export"
	"$F" push "$M" "${sel[@]}" --remote "$S/kept" --results-only
	tar -C "$S" -cJf "$OUT/table6-tables.tar.xz" table6-export
	[ -d "$S/kept" ] && tar -C "$S" -cJf "$OUT/table6-kept.tar.xz" kept
	ls -la "$OUT"
} 2>&1 | tee "$OUT/table6.txt"
