#!/bin/bash
# Issue 21's checks on a lent GPU machine, in one command of about 9 minutes, after
# scripts/device/prepare.sh here (carry .device). Writes its figures under $OUT:
#   backend.txt   the plugin found, where it looked, the environment it runs with
#   check.txt     one federated round on the GPU vs fpfast (1e-4), reruns, lockstep
#   bench.txt     bench --round: FedOBP-FMNIST in lockstep (also with nondeterministic scatter-adds)
#                 and client by client, FedSelect ResNet-18
#   smoke.txt     fmnist-smoke (one round) on fpfast and on the GPU, twice: parameters compared
#   together.txt  runs trained together (run --together N, their clients in lockstep): fmnist-smoke's
#                 8 runs together against one at a time (every output's digest compared), and
#                 FedOBP Table 6 FMNIST's FedAvg, 2 rounds of 1, 4 and 16 seeds together (wall time)
#   tf32.txt      (xla backends only) the check and bench --round again on BACKEND,tf32, TensorFloat-32
#                 products beside check.txt's and bench.txt's float32 ones (tf32 is not the default)
# BACKEND (default xla:cuda) and REF (default fpfast) may be set; with BACKEND=fpcpu the script
# runs on a CPU machine too, which is how it is tested before device time is spent.
set -uo pipefail
. "$(dirname "$0")/common.sh"
BACKEND=${BACKEND:-xla:cuda}
REF=${REF:-fpfast}
BENCH_ROUNDS=${BENCH_ROUNDS:-3}
step() { echo; echo "=== $* ($(date -u +%T))"; }

step "machine"
{ nvidia-smi -L 2>&1; uname -m; nproc; "$F" version; } | tee "$OUT/backend.txt"
step "backend $BACKEND"
"$F" backend "$BACKEND" 2>&1 | tee -a "$OUT/backend.txt"

step "check: one round on $BACKEND against $REF"
"$F" backend "$BACKEND" --check --against "$REF" 2>&1 | tee "$OUT/check.txt"
"$F" backend "$BACKEND" --check --against "$REF" --json >"$OUT/check.json" 2>>"$OUT/check.txt"

step "bench --round (FedOBP-FMNIST, lockstep default for xla)"
"$F" bench --round --backend "$BACKEND" --rounds "$BENCH_ROUNDS" --no-torch 2>&1 | tee "$OUT/bench.txt"
case $BACKEND in
xla:*)
	# Same graphs, same process setup, but float32 products may round their inputs to
	# TensorFloat-32 (no NVIDIA_TF32_OVERRIDE=0, Triton GEMMs allowed): a separate process, since
	# those settings hold for a whole process. The check's tolerance (1e-4) may not hold for tf32;
	# its figure is what to report.
	step "TensorFloat-32 beside float32: check and bench --round on $BACKEND,tf32"
	"$F" backend "$BACKEND,tf32" --check --against "$REF" 2>&1 | tee "$OUT/tf32.txt"
	"$F" bench --round --backend "$BACKEND,tf32" --rounds "$BENCH_ROUNDS" --no-torch 2>&1 | tee -a "$OUT/tf32.txt"
	;;
esac
step "bench --round with atomics allowed in XLA's scatter-adds (is determinism what a step costs?)"
# Measures only: a run keeps --xla_gpu_deterministic_ops=true. On the second H200 a lockstep
# step took 11.5 ms with col2im a ScatterSum (docs/gpus.md); lockstep-3 gathered it instead, and
# since xlagraph-1 the XLA graphs have no scatters in the convolution layers (XLA's convolutions,
# reduce-window and select-and-scatter: model/native.go); what deterministic ops cost them is this.
XLA_FLAGS="--xla_gpu_deterministic_ops=false ${XLA_FLAGS:-}" "$F" bench --round --backend "$BACKEND" --rounds 2 --ft=false --no-torch 2>&1 | tee -a "$OUT/bench.txt"
step "bench --round, clients one after another"
"$F" bench --round --backend "$BACKEND" --rounds 1 --lockstep=false --ft=false --no-torch 2>&1 | tee -a "$OUT/bench.txt"
step "bench --round --setting fedselect-cifar10 (ResNet-18)"
"$F" bench --round --backend "$BACKEND" --setting fedselect-cifar10 --rounds 2 2>&1 | tee -a "$OUT/bench.txt"

step "runs together: fmnist-smoke, 4 seeds x 2 methods, one at a time and all together"
together() { # together N STORE: fmnist-smoke's 8 runs, 2 rounds, N at a time, --json
	"$F" run manifests/fmnist-smoke.yaml -S 'seeds=[0,1,2,3]' -S train.rounds=2 --backend "$BACKEND" \
		--together "$1" --lockstep on --store "$2" --json 2>>"$OUT/together.txt"
}
{
	rm -rf /tmp/tog1 /tmp/tog8
	together 1 /tmp/tog1 >/tmp/tog1.json && together 8 /tmp/tog8 >/tmp/tog8.json &&
		python3 - /tmp/tog1.json /tmp/tog8.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
A = {s["name"]: s["outputs"] for s in a["stages"]}
B = {s["name"]: s["outputs"] for s in b["stages"]}
same = [n for n in A if A[n] == B.get(n)]
print(f"{len(same)} of {len(A)} stages give the same bits together as one at a time "
      f"({a['seconds']:.1f} s one at a time, {b['seconds']:.1f} s together)")
for n in A:
    if A[n] != B.get(n):
        print("differs:", n)
PY
	for n in 1 4 16; do
		seeds=$(seq -s, 0 $((n - 1)))
		rm -rf /tmp/togt
		TIMEFORMAT="$n runs together: %R s wall for 2 rounds (FedAvg, FedOBP Table 6 FMNIST Dir(0.1), 100 clients, 10 a round)"
		time "$F" run manifests/fedobp-table6-fmnist-dir01.yaml --only fedavg -S "seeds=[$seeds]" -S train.rounds=2 \
			-S train.eval_every=0 --backend "$BACKEND" --together "$n" --store /tmp/togt -q >/dev/null
	done
} 2>&1 | tee -a "$OUT/together.txt"

step "fmnist-smoke, one round: $REF, then $BACKEND twice"
smoke() { # smoke NAME BACKEND
	rm -rf "/tmp/smoke-$1"
	"$F" run manifests/fmnist-smoke.yaml -S train.rounds=1 --backend "$2" --store "/tmp/smoke-$1/store" -q >/dev/null &&
		"$F" export manifests/fmnist-smoke.yaml -S train.rounds=1 --backend "$2" --store "/tmp/smoke-$1/store" \
			--models --format csv -o "/tmp/smoke-$1/export" >/dev/null
}
{
	smoke ref "$REF" && smoke gpu1 "$BACKEND" && smoke gpu2 "$BACKEND" &&
		python3 scripts/device/compare_models.py /tmp/smoke-ref/export /tmp/smoke-gpu1/export /tmp/smoke-gpu2/export
} 2>&1 | tee "$OUT/smoke.txt"
step "done"
