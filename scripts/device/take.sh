#!/bin/bash
# Takes in, on this machine, what a device call of scripts/device/sweep.sh brought back (DIR:
# the call's files_at): the finished cells' kept results over reproduced/ (KEPT), and the
# unfinished cells' checkpoints into .device/ckpt, which the next call carries and resumes.
# Then `make reproduced-page` and `make reproduced` show and check the new cells.
set -euo pipefail
D=${1:?usage: take.sh DIR (a sweep call\'s files: kept-new.tar.xz, ckpt.tar.xz)}
D=$(cd "$D" && pwd)
cd "$(dirname "$0")/../.."
KEPT=${KEPT:-reproduced}
mkdir -p "$KEPT"
if [ -f "$D/kept-new.tar.xz" ]; then
	tar -C "$KEPT" -xJf "$D/kept-new.tar.xz"
	echo "take: $(tar -tJf "$D/kept-new.tar.xz" | grep -c '^./cells/.*evaluate') kept evaluations unpacked into $KEPT"
fi
rm -rf .device/ckpt
if [ -f "$D/ckpt.tar.xz" ]; then
	mkdir -p .device/ckpt
	tar -C .device/ckpt -xJf "$D/ckpt.tar.xz"
	echo "take: $(wc -l <.device/ckpt/cells.txt) unfinished cells, $(ls .device/ckpt/ckpt 2>/dev/null | wc -l) checkpoints in .device/ckpt for the next call"
fi
