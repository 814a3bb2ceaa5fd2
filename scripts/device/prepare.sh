#!/bin/bash
# Prepares, on this (CPU) machine, what a lent GPU machine needs for issue 21's checks, in
# .device/ (ignored by git; name it in the device tool's carry): the XLA build of fedpipe,
# stripped and xz-compressed to fit the 64 MiB a call carries, Fashion-MNIST and MNIST. The GPU
# machine has no Go; it runs scripts/device/gpu-check.sh and scripts/device/table6.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
FMNIST=${FMNIST:-/usr/share/datasets/fashion-mnist}
mkdir -p .device/data/fashion-mnist
commit=$(git rev-parse HEAD)$(git diff --quiet HEAD || echo -modified)
echo "building the XLA fedpipe ($commit)"
CGO_ENABLED=1 go build -tags xla -trimpath -ldflags "-s -w -X main.commit=$commit" -o .device/fedpipe-xla ./cmd/fedpipe
xz -9 -T0 -f .device/fedpipe-xla
for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
	if [ ! -f "$FMNIST/$f" ]; then
		echo "missing $FMNIST/$f (apt-get install dataset-fashion-mnist, or set FMNIST)" >&2
		exit 2
	fi
	cp -u "$FMNIST/$f" .device/data/fashion-mnist/
done
# MNIST too, where make data installed it (the MNIST cells of scripts/device/cells.sh).
MNIST=${MNIST:-${XDG_DATA_HOME:-$HOME/.local/share}/fedpipe/datasets/mnist}
if [ -f "$MNIST/train-images-idx3-ubyte.gz" ]; then
	mkdir -p .device/data/mnist
	cp -u "$MNIST"/*-ubyte.gz .device/data/mnist/
fi
du -sh .device
echo "carry: [\".device\"]; command: bash scripts/device/gpu-check.sh (then bash scripts/device/table6.sh; CPU cells: scripts/device/cells.sh)"
