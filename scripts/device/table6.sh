#!/bin/bash
# Runs as much of FedOBP's Table 6 FMNIST Dir(0.1) column as BUDGET seconds allow (default
# 500) on the GPU, seed 0 first, then exports what finished: $OUT/table6.txt (progress, ls,
# verify) and $OUT/table6-tables.tar.xz (every finished table as CSV and Parquet).
set -uo pipefail
. "$(dirname "$0")/common.sh"
BACKEND=${BACKEND:-xla:cuda}
BUDGET=${BUDGET:-500}
SEEDS=${SEEDS:-[0]}
M=manifests/fedobp-table6-fmnist-dir01.yaml
S=/tmp/table6-store
{
	echo "=== $M seeds=$SEEDS on $BACKEND for at most ${BUDGET}s ($(date -u +%T))"
	# SIGINT at the budget: fedpipe stops at the next round, keeps finished stages and checkpoints.
	timeout -s INT "$BUDGET" "$F" run "$M" -S "seeds=$SEEDS" --backend "$BACKEND" --store "$S"
	echo "run exit $? ($(date -u +%T))"
	"$F" ls "$M" -S "seeds=$SEEDS" --backend "$BACKEND" --store "$S"
	"$F" verify "$M" -S "seeds=$SEEDS" --backend "$BACKEND" --store "$S"
	rm -rf /tmp/table6-export
	"$F" export "$M" -S "seeds=$SEEDS" --backend "$BACKEND" --store "$S" --format csv,parquet -o /tmp/table6-export
	tar -C /tmp -cJf "$OUT/table6-tables.tar.xz" table6-export && ls -la "$OUT"
} 2>&1 | tee "$OUT/table6.txt"
