#!/usr/bin/env bash
# make reproduce: computes the missing paper-scale cells of the table manifests whose data is
# on this machine (the FMNIST ones), one cell (method × seed) at a time, seed 0 of every
# manifest first, then the other seeds; each cell runs at the lowest priority, keeps its
# train checkpoints in $STORE (so an interrupted cell resumes where it stopped) and, once
# finished, is pushed results-only (no models) into the kept directory $KEPT, whose results
# `fedpipe reproduced` checks and CI verifies. SIGTERM or Ctrl-C stops the running cell
# cleanly (it saves its checkpoint) and ends the script; run it again to go on.
#
#   make reproduce                        # everything, in the order below
#   METHODS="fedavg local" SEEDS=0 make reproduce
#   nice -n 19 make reproduce &           # in the background while you work; kill -STOP to pause
#   tail -f .fedpipe-reproduce.log        # the running cell: a line every 30 s (round, ETA)
set -uo pipefail
cd "$(dirname "$0")/.."
FEDPIPE=${FEDPIPE:-./bin/fedpipe}
STORE=${STORE:-.fedpipe-reproduce}
KEPT=${KEPT:-reproduced}
SEEDS=${SEEDS:-"0 1 2 3"}
MANIFESTS=${MANIFESTS:-"manifests/fedobp-table6-fmnist-dir01.yaml manifests/fedobp-table6-fmnist-dir05.yaml manifests/fedobp-table8-fmnist.yaml manifests/fedobp-table7-fmnist.yaml"}
# The methods every FedOBP table shares come first, in this order; the rest in manifest order.
FIRST=${FIRST:-"fedavg local fedobp fedper fedrep lgfedavg"}
LOG=${LOG:-$STORE.log}
mkdir -p "$KEPT"

child=0
stop() {
	[ "$child" -ne 0 ] && kill -TERM "$child" 2>/dev/null && wait "$child"
	echo "reproduce: stopped; run it again to resume" | tee -a "$LOG"
	exit 130
}
trap stop TERM INT

# labels prints a manifest's method labels: $METHODS if set, else FIRST's that it has,
# then its others in order.
labels() {
	local all
	all=$(sed -n '/^methods:/,/^[a-z]/s/^  - name: \([^ ]*\).*/\1/p' "$1")
	if [ -n "${METHODS:-}" ]; then
		for l in $METHODS; do grep -qx "$l" <<<"$all" && echo "$l"; done
		return
	fi
	for l in $FIRST; do grep -qx "$l" <<<"$all" && echo "$l"; done
	for l in $all; do grep -qw "$l" <<<"$FIRST" || echo "$l"; done
}

for seed in $SEEDS; do
	for m in $MANIFESTS; do
		for label in $(labels "$m"); do
			cell=(-S "seeds=[$seed]" --only "$label")
			# Already kept with the current keys (its evaluation is in $KEPT)? Nothing to do.
			if "$FEDPIPE" status "$m" "${cell[@]}" --store "$STORE" --remote "file://$PWD/$KEPT" --json 2>/dev/null |
				grep -A3 '"kind": "evaluate"' | grep -q '"state": "remote"'; then
				continue
			fi
			echo "reproduce: $(date -u +%FT%TZ) $m $label seed $seed" | tee -a "$LOG"
			nice -n 19 "$FEDPIPE" run "$m" "${cell[@]}" --store "$STORE" >>"$LOG" 2>&1 &
			child=$!
			wait "$child"
			rc=$?
			child=0
			if [ "$rc" -ne 0 ]; then
				echo "reproduce: $m $label seed $seed exited $rc (see $LOG)" | tee -a "$LOG"
				[ "$rc" -eq 130 ] && exit 130
				continue
			fi
			# Push the finished cell; retried, since the store was once refused right after the
			# run closed it (Badger: "Open existing file ... Create a new file").
			for try in 1 2 3; do
				if "$FEDPIPE" push "$m" "${cell[@]}" --store "$STORE" --remote "file://$PWD/$KEPT" --results-only >>"$LOG" 2>&1; then
					echo "reproduce: kept $m $label seed $seed" | tee -a "$LOG"
					break
				fi
				echo "reproduce: push of $m $label seed $seed failed (try $try; see $LOG)" | tee -a "$LOG"
				sleep 10
			done
		done
	done
done
