#!/bin/bash
# Runs paper-scale cells on a lent machine (its CPU cores, or with BACKEND its GPU), side by side, for at most BUDGET
# seconds (default 400), with the built-in CPU backend (fpfast: the same bits, keys and results as
# on any other x86-64 machine), and brings back what a later run needs to go on:
#   $OUT/cells.txt       each cell's progress and the final ls
#   $OUT/ckpt.tar.xz     a directory remote holding each unfinished cell's last checkpoint
#                        (REMOTE_IN of the next call; `fedpipe pull --checkpoints` reads it)
#   $OUT/kept.tar.xz     each finished cell's results-only push (what `reproduced/` keeps)
# CELLS lists the cells as MANIFEST:LABEL (seed 0 unless SEEDS is set), THREADS the cores each
# may use (default 4: a round's clients train side by side, one per core); cell i is pinned to
# cores FIRST_CPU+i*THREADS.. so that a GPU check beside it keeps the cores below FIRST_CPU.
# EXTRA adds arguments to each run (a test: EXTRA="-S train.checkpoint_every=1").
# BACKEND (default: fpfast) runs the cells on another backend: BACKEND=xla:cuda trains them on
# the GPU (a GPU cell's keys name the plugin, so its checkpoint resumes only on the same
# plugin build, on this kind of machine: carry it back in with REMOTE_IN).
# REMOTE_IN, when set, is a directory remote carried from an earlier call: each cell resumes
# from its checkpoint there. SIGINT at the budget stops every cell at its next round; the last
# pushed checkpoint (every train.checkpoint_every rounds) is what goes on.
# A checkpoint holds the personal models a method keeps (FedPer: ~100 MiB), more than a call
# carries back; methods without personal state (FedAvg: 2.2 MiB) go on across calls.
#   CELLS="manifests/fedobp-table6-mnist-dir05.yaml:fedavg" THREADS=16 BUDGET=330 bash scripts/device/cells.sh
set -uo pipefail
. "$(dirname "$0")/common.sh"
BUDGET=${BUDGET:-400}
THREADS=${THREADS:-4}
FIRST_CPU=${FIRST_CPU:-0}
SEEDS=${SEEDS:-[0]}
bk=()
[ -n "${BACKEND:-}" ] && bk=(--backend "$BACKEND")
W=${WORK:-/tmp/fedpipe-cells}
rm -rf "$W" && mkdir -p "$W/remote" "$W/final" "$W/kept"
[ -n "${REMOTE_IN:-}" ] && cp -a "$REMOTE_IN/." "$W/remote/"
ncpu=$(nproc)
i=0
pids=()
for c in ${CELLS:?CELLS=\"MANIFEST:LABEL ...\"}; do
	m=${c%%:*} l=${c##*:}
	lo=$((FIRST_CPU + i * THREADS)) hi=$((FIRST_CPU + (i + 1) * THREADS - 1))
	pin=()
	[ "$hi" -lt "$ncpu" ] && command -v taskset >/dev/null && pin=(taskset -c "$lo-$hi")
	GOMAXPROCS=$THREADS "${pin[@]}" "$F" run "$m" --only "$l" -S "seeds=$SEEDS" "${bk[@]}" ${EXTRA:-} --store "$W/s$i" \
		--remote "$W/remote" >"$W/log$i" 2>&1 &
	pids+=($!)
	echo "cell $i: $m $l on ${THREADS} threads ${pin[*]} (pid $!, $(date -u +%T))" | tee -a "$OUT/cells.txt"
	i=$((i + 1))
done
sleep "$BUDGET" &
sl=$!
# End early when every cell is done.
while kill -0 "$sl" 2>/dev/null; do
	alive=0
	for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
	[ "$alive" -eq 0 ] && break
	sleep 5
done
kill "$sl" 2>/dev/null
for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null; done
wait
i=0
{
	for c in $CELLS; do
		m=${c%%:*} l=${c##*:}
		echo "=== cell $i: $m $l"
		grep -v '^\s*$' "$W/log$i" | tail -n 4
		"$F" push "$m" --only "$l" -S "seeds=$SEEDS" "${bk[@]}" --store "$W/s$i" --remote "$W/kept" --results-only 2>&1 | tail -n 3
		"$F" ls "$m" --only "$l" -S "seeds=$SEEDS" "${bk[@]}" --store "$W/s$i" 2>&1 | tail -n 6
		i=$((i + 1))
	done
	# The checkpoints alone (the partitions' results, ~100 MB, are recomputed in seconds):
	# each ckpt/<key> with the blobs it names.
	(cd "$W/remote" && [ -d ckpt ] && for k in ckpt/*; do
		mkdir -p "$W/final/ckpt" "$W/final/cas" && cp "$k" "$W/final/ckpt/" &&
			grep -o '[0-9a-f]\{64\}' "$k" | while read -r d; do cp "cas/$d" "$W/final/cas/"; done
	done)
	tar -C "$W" -cJf "$OUT/ckpt.tar.xz" final && tar -C "$W" -cJf "$OUT/kept.tar.xz" kept
	ls -la "$OUT"
	du -sh "$W"/final "$W"/kept
} 2>&1 | tee -a "$OUT/cells.txt"
