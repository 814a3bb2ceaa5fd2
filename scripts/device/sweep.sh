#!/bin/bash
# One device call, as many paper-scale cells as fit: takes the cells `make reproduce` would
# (PLAN=index: its order, skipping every cell kept on any backend), the part-done ones of the
# previous call first, and trains them on BACKEND (default xla:cuda) in groups, each group one
# `fedpipe run` whose runs train together (their clients in one compiled step: a manifest's
# missing methods of one seed, or of several seeds that miss the same methods), for at most
# BUDGET seconds of training (default 420, leaving a 10-minute call time to push and pack);
# then brings back
#   $OUT/sweep.txt        the plan, each group's progress, and the verdicts of what finished
#   $OUT/kept-new.tar.xz  what the finished cells added to the kept directory (KEPT, default the
#                         carried copy of reproduced/): results-only pushes, with their index
#                         entries, to unpack over reproduced/ (scripts/device/take.sh)
#   $OUT/ckpt.tar.xz      the last checkpoints of the unfinished cells that fit in CKPT_MIB
#                         (default 48) and the list of those cells (.device/ckpt after take.sh,
#                         where the next call resumes them)
# TOGETHER and LOCKSTEP, when set, are run's --together and --lockstep (on XLA the defaults
# train a group's runs together, in lockstep; a CPU test sets TOGETHER=4 LOCKSTEP=on).
# MAX (default 16, train.MaxTogether) bounds the cells one group trains; MANIFESTS, SEEDS and
# METHODS select as for make reproduce. With BACKEND=fpfast it runs on a CPU (tested so).
#   bash scripts/device/prepare.sh && (device) bash scripts/device/sweep.sh; (here) bash scripts/device/take.sh FILES_AT
set -uo pipefail
. "$(dirname "$0")/common.sh"
BACKEND=${BACKEND:-xla:cuda}
BUDGET=${BUDGET:-420}
MAX=${MAX:-16}
CKPT_MIB=${CKPT_MIB:-48}
KEPT=${KEPT:-reproduced}
mkdir -p "$KEPT" && KEPT=$(cd "$KEPT" && pwd)
W=${WORK:-/tmp/fedpipe-sweep}
rm -rf "$W" && mkdir -p "$W/remote" "$W/final"
[ -d .device/ckpt/ckpt ] && cp -a .device/ckpt/. "$W/remote/"
end=$(($(date +%s) + BUDGET))
touch "$W/start"
log() { echo "sweep: $(date -u +%T) $*" | tee -a "$OUT/sweep.txt"; }

# The plan: the previous call's unfinished cells, then make reproduce's order.
{
	[ -f .device/ckpt/cells.txt ] && cat .device/ckpt/cells.txt
	PLAN=index BACKEND=$BACKEND FEDPIPE=$F KEPT=$KEPT STORE=$W/store bash scripts/reproduce.sh
} | awk '!seen[$0]++' >"$W/plan"
log "$(wc -l <"$W/plan") cells missing on every backend; the first $MAX go first, in groups:"
# groups: the first MAX cells, grouped by manifest; a manifest's seeds that miss the same
# methods form one group (one run of labels x seeds), each other seed one of its own.
python3 - "$W/plan" "$MAX" >"$W/groups" <<'EOF'
import sys
cells = [l.split() for l in open(sys.argv[1]) if l.strip()][: int(sys.argv[2])]
order, by = [], {}
for m, label, _, seed in cells:
    if m not in by:
        order.append(m)
        by[m] = {}
    by[m].setdefault(seed, []).append(label)
for m in order:
    merged = {}
    for seed, labels in by[m].items():
        merged.setdefault(tuple(labels), []).append(seed)
    for labels, seeds in merged.items():
        print(m, ",".join(labels), "[" + ",".join(seeds) + "]")
EOF
tee -a "$OUT/sweep.txt" <"$W/groups"

i=0
while read -r m labels seeds; do
	left=$((end - $(date +%s)))
	if [ "$left" -le 10 ]; then
		log "budget spent: $m $labels $seeds not started"
		continue
	fi
	log "group $i: $m --only $labels -S seeds=$seeds on $BACKEND (${left}s left)"
	# SIGINT at the budget: every run stops at its next round and pushes its checkpoint.
	timeout -s INT "$left" "$F" run "$m" --only "$labels" -S "seeds=$seeds" --backend "$BACKEND" ${TOGETHER:+--together "$TOGETHER"} ${LOCKSTEP:+--lockstep "$LOCKSTEP"} \
		--store "$W/store" --remote "file://$W/remote" >"$W/log$i" 2>&1 </dev/null
	rc=$?
	log "group $i exit $rc: $(grep -E 'runs train together|stages ran|interrupted' "$W/log$i" | tr '\n' ' ')"
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 130 ] && tail -n 5 "$W/log$i" | tee -a "$OUT/sweep.txt"
	i=$((i + 1))
done <"$W/groups"

# What finished goes into $KEPT (results-only, with its index entry); what did not, its
# checkpoint into ckpt.tar.xz.
: >"$W/final/cells.txt"
kept=()
while read -r m labels seeds; do
	for l in ${labels//,/ }; do
		for s in $(tr -d '[]' <<<"$seeds" | tr ',' ' '); do
			sel=(--only "$l" -S "seeds=[$s]" --backend "$BACKEND" --store "$W/store")
			if "$F" status "$m" "${sel[@]}" --json 2>/dev/null | grep -A3 '"kind": "evaluate"' | grep -q '"state": "cached"'; then
				if "$F" push "$m" "${sel[@]}" --remote "file://$KEPT" --results-only >>"$OUT/sweep.txt" 2>&1; then
					log "kept $m $l seed $s"
					kept+=("$m")
				else
					log "push of $m $l seed $s into $KEPT failed"
				fi
			else
				echo "$m $l seed $s" >>"$W/final/cells.txt"
			fi
		done
	done
done <"$W/groups"
for m in $(printf '%s\n' "${kept[@]}" | sort -u); do
	"$F" reproduced "$m" --kept "$KEPT" --backend "$BACKEND" 2>&1 | tee -a "$OUT/sweep.txt"
done
(cd "$KEPT" && find . -type f -newer "$W/start" -print0 | tar --null -T - -cJf "$OUT/kept-new.tar.xz")

# Checkpoints, smallest first, while their blobs (model weights: xz hardly shrinks them) fit in
# CKPT_MIB: each ckpt/<key> with the blobs it names.
if [ -d "$W/remote/ckpt" ]; then
	total=0
	for k in $(cd "$W/remote" && for k in ckpt/*; do
		[ -f "$k" ] || continue
		echo "$(grep -o '[0-9a-f]\{64\}' "$k" | sort -u | sed 's#^#cas/#' | xargs du -cb 2>/dev/null | tail -1 | cut -f1) $k"
	done | sort -n | tr ' ' ':'); do
		size=${k%%:*} k=${k#*:}
		if [ $((total + size)) -gt $((CKPT_MIB << 20)) ]; then
			log "checkpoint $k left out: $((size >> 20)) MiB over the ${CKPT_MIB} MiB left with the others"
			continue
		fi
		total=$((total + size))
		mkdir -p "$W/final/ckpt" "$W/final/cas" && cp "$W/remote/$k" "$W/final/ckpt/"
		grep -o '[0-9a-f]\{64\}' "$W/remote/$k" | while read -r d; do cp "$W/remote/cas/$d" "$W/final/cas/" 2>/dev/null; done
	done
fi
XZ_OPT="-1 -T0" tar -C "$W/final" -cJf "$OUT/ckpt.tar.xz" .
log "unfinished: $(wc -l <"$W/final/cells.txt") cells; $(ls "$W/final/ckpt" 2>/dev/null | wc -l) checkpoints carried back"
ls -la "$OUT" | tee -a "$OUT/sweep.txt"
