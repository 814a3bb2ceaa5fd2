#!/usr/bin/env bash
# make reproduce: computes the missing paper-scale cells of the table manifests whose data is
# on this machine (FMNIST and MNIST: FedOBP Tables 6 and 8, DM-PFL Table 7), one cell
# (method × seed) at a time: the cells an earlier run left part-done first (a train
# checkpoint in $STORE, or a shorter cached run the cell continues: `fedpipe status` names
# both), so the CPU time already spent on them is not left waiting behind hours of others;
# then seed 0 of every manifest, then the other seeds, and within
# a seed the quick methods ($FIRST: about half an hour a cell here) of every manifest before
# the slow ones (hours: APFL, FedSelect, FedDPA, ...), the ResNet-18 manifests (FedOBP Table
# 7, when named in $MANIFESTS and their model.init weights exist) after all the others, so
# that the most published cells are done soonest; a manifest whose model.init file is
# missing is skipped (its cells need the weights: `fedpipe reproduced` says so); each cell
# runs at the lowest priority, keeps its
# train checkpoints in $STORE (so an interrupted cell resumes where it stopped) and, once
# finished, is pushed results-only (no models) into the kept directory $KEPT, whose results
# `fedpipe reproduced` checks and CI verifies. SIGTERM or Ctrl-C stops the running cell
# cleanly (it saves its checkpoint) and ends the script; run it again to go on.
# Once a cell is kept, `fedpipe gc` drops the results in $STORE (checkpoints of part-done
# cells stay): a finished cell's full results (models, personal models of 100 clients) are
# about 2 GB, and 32 of them once filled this machine's disk (67.6 GB) and stopped the queue
# with exit 4. KEEP_STORE=1 keeps them.
#
#   make reproduce                        # everything, in the order below
#   METHODS="fedavg local" SEEDS=0 make reproduce
#   nice -n 19 make reproduce &           # in the background while you work; kill -STOP to pause
#   tail -f .fedpipe-reproduce.log        # the running cell: a line every 30 s (round, ETA)
#   PLAN=1 make reproduce                 # only list the missing cells, in the order they would run
#   PLAN=index make reproduce             # the same from the kept index alone (any backend), in seconds
#   HOURS=6 make reproduce                # start no cell whose projected time exceeds what is left of 6 h
#
# Order. With $COSTS (default scripts/method-costs.tsv, written by `fedpipe bench --methods
# --costs`), the cells of each seed run cheapest first, by their projected time: the
# measured seconds a round of the method on its setting (FedOBP Table 6 FMNIST for the
# FedOBP tables, DM-PFL Table 7 for DM-PFL's) times the manifest's rounds, plus its
# evaluations; PLAN=1 prints that projection beside each cell. With HOURS (or DEADLINE, a
# time `date -d` reads) a cell whose projection does not fit in the time left is not
# started; the queue goes on to the ones that fit. ORDER=manifest keeps the order below.
#
# Part-done cells outlive the machine: when a cell stops before it finishes (SIGTERM, Ctrl-C,
# a failure), its last checkpoint is pushed into $PARTDONE (default $KEPT/part-done/MANIFEST/
# LABEL/seedS, a directory remote of that checkpoint alone, zstd-compressed) while it is at
# most $PARTDONE_MIB MiB (default 40): commit it. On start, every checkpoint there seeds
# $STORE (`fedpipe pull --checkpoints`, which keeps a later local one), so a fresh clone
# resumes the cell where it stopped, bit for bit; once the cell is kept its folder is removed.
set -uo pipefail
set -f # no pathname expansion: FIRST holds label patterns (fedobp-*), not file names
cd "$(dirname "$0")/.."
FEDPIPE=${FEDPIPE:-./bin/fedpipe}
STORE=${STORE:-.fedpipe-reproduce}
KEPT=${KEPT:-reproduced}
SEEDS=${SEEDS:-"0 1 2 3"}
MANIFESTS=${MANIFESTS:-"manifests/fedobp-table6-fmnist-dir01.yaml manifests/fedobp-table6-fmnist-dir05.yaml manifests/fedobp-table8-fmnist.yaml
manifests/fedobp-table6-mnist-dir01.yaml manifests/fedobp-table6-mnist-dir05.yaml manifests/fedobp-table8-mnist.yaml
manifests/dmpfl-table7-dir01.yaml manifests/dmpfl-table7-dir03.yaml manifests/dmpfl-table7-pathological.yaml"}
# The quick methods, as label patterns: every FedOBP table's shared baselines and FedOBP's
# own variants (Table 8), DM-PFL's FedAvg with fine-tuning, in this order; the rest follow
# in manifest order.
FIRST=${FIRST:-"fedavg local fedobp fedobp-* fedper fedrep lgfedavg fedavg-ft"}
LOG=${LOG:-$STORE.log}
PARTDONE=${PARTDONE:-$KEPT/part-done}
PARTDONE_MIB=${PARTDONE_MIB:-40}
COSTS=${COSTS:-scripts/method-costs.tsv}
THREADS=${THREADS:-2}
deadline=
[ -n "${HOURS:-}" ] && deadline=$(($(date +%s) + $(awk -v h="$HOURS" 'BEGIN{printf "%d", h*3600}')))
[ -n "${DEADLINE:-}" ] && deadline=$(date -d "$DEADLINE" +%s)
# BACKEND, when set, computes the cells on that backend (scripts/device/sweep.sh: xla:cuda).
# A cell kept on another backend counts as kept (docs/reproducing.md): the CPU queue skips
# what a GPU kept, and a GPU sweep what the CPU kept.
BACKEND=${BACKEND:-}
bk=()
[ -n "$BACKEND" ] && bk=(--backend "$BACKEND")
family=${BACKEND:-fpfast}
family=${family%%,*}
family=${family//:/-}
mkdir -p "$KEPT"
keptdir=$(cd "$KEPT" && pwd) # for file:// URLs, whether KEPT is relative or absolute
# An empty store to ask `fedpipe status` what $KEPT holds: against $STORE, a cell computed
# there reads "cached" whether or not it was kept.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT

child=0
running=() # the running cell: manifest, label, seed
stop() {
	[ "$child" -ne 0 ] && kill -TERM "$child" 2>/dev/null && wait "$child"
	[ ${#running[@]} -eq 3 ] && savepart "${running[@]}"
	echo "reproduce: stopped; run it again to resume" | tee -a "$LOG"
	exit 130
}

# partdir prints the folder of cell ($1 manifest, $2 label, $3 seed) under $PARTDONE.
partdir() {
	local name
	name=$(sed -n 's/^name:[[:space:]]*\([^ #]*\).*/\1/p' "$1" | head -1)
	echo "$PARTDONE/$name/$2/seed$3"
}

# savepart pushes the cell's last checkpoint from $STORE into its $PARTDONE folder (replacing
# what was there) and keeps it when it is at most $PARTDONE_MIB MiB.
savepart() {
	local m=$1 label=$2 seed=$3 d size
	d=$(partdir "$m" "$label" "$seed")
	rm -rf "$d.new" && mkdir -p "$d.new"
	if ! "$FEDPIPE" push "$m" -S "seeds=[$seed]" --only "$label" "${bk[@]}" --store "$STORE" --remote "file://$(cd "$d.new" && pwd)" --checkpoints >>"$LOG" 2>&1 ||
		[ ! -d "$d.new/ckpt" ]; then
		echo "reproduce: no checkpoint of $m $label seed $seed to keep in $PARTDONE" | tee -a "$LOG"
		rm -rf "$d.new"
		return 0
	fi
	printf '%s %s %s\n' "$m" "$label" "$seed" >"$d.new/cell.txt"
	size=$(du -sb "$d.new" | cut -f1)
	if [ "$size" -gt $((PARTDONE_MIB << 20)) ]; then
		echo "reproduce: checkpoint of $m $label seed $seed is $((size >> 20)) MiB, over PARTDONE_MIB=$PARTDONE_MIB: not kept in $PARTDONE" | tee -a "$LOG"
		rm -rf "$d.new"
		return 0
	fi
	rm -rf "$d" && mv "$d.new" "$d"
	echo "reproduce: part-done $m $label seed $seed: its checkpoint ($((size >> 10)) KiB) is in $d; commit it" | tee -a "$LOG"
}

# seedparts pulls every checkpoint kept in $PARTDONE into $STORE (a later local one stays).
seedparts() {
	local f m label seed d
	[ -d "$PARTDONE" ] || return 0
	set +f
	for f in "$PARTDONE"/*/*/seed*/cell.txt; do
		set -f
		[ -f "$f" ] || continue
		read -r m label seed <"$f"
		d=$(cd "$(dirname "$f")" && pwd)
		[ -f "$m" ] || continue
		if "$FEDPIPE" pull "$m" -S "seeds=[$seed]" --only "$label" "${bk[@]}" --store "$STORE" --remote "file://$d" --checkpoints >>"$LOG" 2>&1; then
			echo "reproduce: $m $label seed $seed: its kept checkpoint seeds $STORE" | tee -a "$LOG"
		else
			echo "reproduce: pull of the kept checkpoint of $m $label seed $seed failed (see $LOG)" | tee -a "$LOG"
		fi
	done
	set -f
}
trap stop TERM INT

# labels prints a manifest's method labels for one pass: with $METHODS, those it has, in
# that order, in pass "first" alone; else pass "first" prints those matching a $FIRST
# pattern (in $FIRST's order) and pass "rest" the others, in manifest order.
labels() {
	local all l p quick
	all=$(sed -n '/^methods:/,/^[a-z]/s/^  - name: \([^ ]*\).*/\1/p' "$1")
	if [ -n "${METHODS:-}" ]; then
		if [ "$2" = first ]; then
			for l in $METHODS; do grep -qx "$l" <<<"$all" && echo "$l"; done
		fi
		return 0
	fi
	if [ "$2" = first ]; then
		for p in $FIRST; do
			for l in $all; do
				# shellcheck disable=SC2053 # $p is a pattern
				[[ $l == $p ]] && echo "$l"
			done
		done | awk '!seen[$0]++'
		return 0
	fi
	for l in $all; do
		quick=0
		for p in $FIRST; do
			# shellcheck disable=SC2053
			[[ $l == $p ]] && quick=1
		done
		[ "$quick" -eq 0 ] && echo "$l"
	done
	return 0
}

# cell computes and keeps one cell (manifest $1, label $2, seed $3) unless it is kept
# already; with PLAN set it only says that it would.
declare -A seen # the cells already taken this run
cell() {
	local m=$1 label=$2 seed=$3 rc try
	local args=(-S "seeds=[$seed]" --only "$label" "${bk[@]}")
	[ -n "${seen["$m $label $seed"]:-}" ] && return 0
	seen["$m $label $seed"]=1
	keptelsewhere "$m" "$label" "$seed" && return 0
	# PLAN=index lists, from $KEPT's index alone (no key computed: seconds, not minutes), the
	# cells with no kept evaluation on any backend (scripts/device/sweep.sh, on a machine whose
	# backend this build may not resolve for a status).
	if [ "${PLAN:-}" = index ]; then
		keptany "$m" "$label" "$seed" || echo "$m $label seed $seed"
		return 0
	fi
	# Already kept with the current keys (its evaluation is in $KEPT)? Nothing to do.
	if "$FEDPIPE" status "$m" "${args[@]}" --store "$probe/store" --remote "file://$keptdir" --json 2>/dev/null |
		grep -A3 '"kind": "evaluate"' | grep -q '"state": "remote"'; then
		return 0
	fi
	if [ -n "${PLAN:-}" ]; then
		local proj
		proj=$(projected "$m" "$label")
		echo "$m $label seed $seed${proj:+ (projected $(hours "$proj") h)}"
		return 0
	fi
	if [ -n "$deadline" ] && [ -z "$(partdirof "$m" "$label" "$seed")" ]; then
		local proj left
		proj=$(projected "$m" "$label")
		left=$((deadline - $(date +%s)))
		if [ -n "$proj" ] && [ "$proj" -gt "$left" ]; then
			echo "reproduce: not started: $m $label seed $seed (projected $(hours "$proj") h, $(hours "$left") h left)" | tee -a "$LOG"
			return 0
		fi
	fi
	echo "reproduce: $(date -u +%FT%TZ) $m $label seed $seed" | tee -a "$LOG"
	running=("$m" "$label" "$seed")
	nice -n 19 "$FEDPIPE" run "$m" "${args[@]}" --store "$STORE" >>"$LOG" 2>&1 &
	child=$!
	wait "$child"
	rc=$?
	child=0
	running=()
	if [ "$rc" -ne 0 ]; then
		echo "reproduce: $m $label seed $seed exited $rc (see $LOG)" | tee -a "$LOG"
		savepart "$m" "$label" "$seed"
		[ "$rc" -eq 130 ] && exit 130
		return 0
	fi
	# Push the finished cell; retried, since the store was once refused right after the
	# run closed it (Badger: "Open existing file ... Create a new file").
	for try in 1 2 3; do
		if "$FEDPIPE" push "$m" "${args[@]}" --store "$STORE" --remote "file://$keptdir" --results-only >>"$LOG" 2>&1; then
			echo "reproduce: kept $m $label seed $seed" | tee -a "$LOG"
			rm -rf "$(partdir "$m" "$label" "$seed")" # its part-done checkpoint, if any: commit the removal
			# Its verdicts, as `fedpipe reproduced` gives them (the rows whose method is the label).
			"$FEDPIPE" reproduced "$m" --kept "$KEPT" 2>/dev/null | awk -v l="$label" '$1 == l && $2 == "|"' |
				sed 's/^ */reproduce: /' | tee -a "$LOG"
			# Its results are kept (results-only) in $KEPT: drop the store's copies, models
			# included, so that the sweep does not fill the disk; checkpoints stay.
			if [ -z "${KEEP_STORE:-}" ] && ! "$FEDPIPE" gc --keep-recent 1s --store "$STORE" >>"$LOG" 2>&1; then
				echo "reproduce: gc of $STORE failed (see $LOG)" | tee -a "$LOG"
			fi
			break
		fi
		echo "reproduce: push of $m $label seed $seed failed (try $try; see $LOG)" | tee -a "$LOG"
		sleep 10
	done
}

# keptany says whether cell ($1, $2, $3) has a kept evaluation on any backend.
keptany() {
	local family=
	keptelsewhere "$@"
}

# keptelsewhere says whether cell ($1, $2, $3) has a kept evaluation made on a backend of
# another family than this queue's (its index entry in $KEPT/cells names the backend).
keptelsewhere() {
	local name f fam files
	name=$(sed -n 's/^name:[[:space:]]*\([^ #]*\).*/\1/p' "$1" | head -1)
	set +f # the script's patterns are labels; here a file pattern
	# fpfast's entry at cells/NAME/STAGE.json, another family's at cells/NAME/FAMILY/STAGE.json
	files=("$KEPT/cells/$name/evaluate%20$2%20seed=$3.json" "$KEPT/cells/$name/"*"/evaluate%20$2%20seed=$3.json")
	set -f
	for f in "${files[@]}"; do
		[ -f "$f" ] || continue
		fam=$(sed -n 's/.*"backend": *"[^/]*\/\([^@/]*\).*/\1/p' "$f" | head -1)
		[ -n "$fam" ] && [ "$fam" != "$family" ] && return 0 # keptany: $family is empty
	done
	return 1
}

# partdirof prints cell ($1, $2, $3)'s $PARTDONE folder when it holds a kept checkpoint.
partdirof() {
	local d
	d=$(partdir "$@")
	[ -f "$d/cell.txt" ] && echo "$d"
	return 0
}

# projected prints cell ($1 manifest, $2 label)'s projected seconds on $THREADS cores from
# $COSTS (nothing when it has no figure for the method): the CPU seconds a round of the
# label, else of its method, measured on the manifest's setting (dmpfl for DM-PFL's tables,
# fedobp for FedOBP's) and scaled by its cell_implied/implied (a cell's mean round against the
# timed one: FedSelect's clients train twice once their mask has grown), times the manifest's
# rounds, plus one evaluation of every client per
# evaluation round (eval_every), divided by $THREADS.
projected() {
	[ -f "$COSTS" ] && ! heavy "$1" || return 0 # the figures are of the CNN settings, not ResNet-18's
	local m=$1 label=$2 setting=fedobp method rounds every
	[[ $(basename "$m") == dmpfl* ]] && setting=dmpfl
	method=$(awk -v l="$label" '$1 == "-" && $2 == "name:" {cur = $3} cur == l && $1 == "method:" {print $2; exit}' "$m")
	rounds=$(sed -n 's/^[[:space:]]*rounds:[[:space:]]*\([0-9]*\).*/\1/p' "$m" | head -1)
	every=$(sed -n 's/^[[:space:]]*eval_every:[[:space:]]*\([0-9]*\).*/\1/p' "$m" | head -1)
	awk -F'\t' -v s="$setting" -v l="$label" -v me="${method:-${label%%-*}}" -v r="${rounds:-0}" -v e="${every:-0}" -v t="$THREADS" '
		/^#/ || $1 != s {next}
		# a round scaled to a cell'"'"'s mean round by cell_implied / implied where both are given
		function cell(x) { return ($6 > 0 && $7 > 0) ? x * $7 / $6 : x }
		$2 == l {byl = cell($4); evl = $5}
		$3 == me || $2 == me {bym = cell($4); evm = $5}
		END {
			round = byl != "" ? byl : bym; ev = byl != "" ? evl : evm
			if (round == "") exit
			n = e > 0 ? int(r / e) : 1
			if (n < 1 || (e > 0 && r % e != 0)) n++
			printf "%d\n", (r * round + n * ev) / t
		}' "$COSTS"
}

# hours prints seconds $1 as hours with two decimals.
hours() { awk -v s="$1" 'BEGIN{printf "%.2f", s / 3600}'; }

# heavy says whether a manifest trains a ResNet (Table 7): hours a cell even for the quick
# methods on a CPU, so those manifests come after all the others.
heavy() { grep -Eq '^[[:space:]]*arch:[[:space:]]*resnet' "$1"; }

# started prints "LABEL SEED" for every train stage of manifest $1 that `fedpipe status`
# says will resume from a checkpoint or continue a cached shorter run in $STORE, within
# $SEEDS (and $METHODS where set).
started() {
	[ "${PLAN:-}" != index ] || return 0
	local name f
	name=$(sed -n 's/^name:[[:space:]]*\([^ #]*\).*/\1/p' "$1" | head -1)
	set +f
	for f in "$PARTDONE/$name"/*/seed*/cell.txt; do
		set -f
		[ -f "$f" ] && awk '{print $2, $3}' "$f"
	done
	set -f
	[ -d "$STORE" ] || return 0
	"$FEDPIPE" status "$1" "${bk[@]}" --store "$STORE" --json 2>/dev/null |
		awk '/"name": "train /{name=$0} /"reason": .*(resumes from its checkpoint|continues from the cached)/{print name}' |
		sed -n 's/.*"name": "train \([^ ]*\) .*seed=\([0-9]*\).*/\1 \2/p' |
		while read -r label seed; do
			[[ " $SEEDS " == *" $seed "* ]] || continue
			[ -z "${METHODS:-}" ] || [[ " $METHODS " == *" $label "* ]] || continue
			echo "$label $seed"
		done
	return 0
}

# missinginit prints the model.init file a manifest names when it does not exist.
missinginit() {
	local f
	f=$(sed -n 's/^[[:space:]]*init:[[:space:]]*\([^ #]*\).*/\1/p' "$1" | head -1)
	[ -n "$f" ] && [ ! -e "$f" ] && echo "$f"
	return 0
}

for m in $MANIFESTS; do
	if [ -n "$(missinginit "$m")" ]; then
		echo "reproduce: skipping $m: its model.init file $(missinginit "$m") is missing (docs/methods.md, \"Initial weights\")" | tee -a "$LOG"
	fi
done
[ -z "${PLAN:-}" ] && seedparts
for m in $MANIFESTS; do
	[ -n "$(missinginit "$m")" ] && continue
	while read -r label seed; do
		cell "$m" "$label" "$seed" </dev/null
	done < <(started "$m")
done
# queue prints a seed's cells ("MANIFEST LABEL") in the order above: the light manifests
# before the heavy, the quick methods ($FIRST) before the rest.
queue() {
	local group pass m label
	for group in light heavy; do
		for pass in first rest; do
			for m in $MANIFESTS; do
				[ -n "$(missinginit "$m")" ] && continue
				if heavy "$m"; then [ "$group" = heavy ] || continue; else [ "$group" = light ] || continue; fi
				for label in $(labels "$m" "$pass"); do
					echo "$m $label"
				done
			done
		done
	done
}

# bycost orders "MANIFEST LABEL" lines by projected time, cheapest first (stable; a cell
# with no projection keeps its place after those with one), unless ORDER=manifest or there
# is no $COSTS.
bycost() {
	if [ "${ORDER:-cost}" = manifest ] || [ ! -f "$COSTS" ]; then
		cat
		return 0
	fi
	local m label i=0 p
	while read -r m label; do
		p=$(projected "$m" "$label")
		printf '%s %d %s %s\n' "${p:-999999999}" "$i" "$m" "$label"
		i=$((i + 1))
	done | sort -n -k1,1 -k2,2 | awk '{print $3, $4}'
}

for seed in $SEEDS; do
	while read -r m label; do
		cell "$m" "$label" "$seed" </dev/null
	done < <(queue | bycost)
done
