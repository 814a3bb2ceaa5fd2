# Sourced by the scripts in scripts/device/ that run on a lent machine (after prepare.sh here,
# carrying .device): $OUT, the fedpipe binary $F (the XLA build prepare.sh packs, unpacked
# once to $FEDPIPE, default /tmp/fedpipe-xla; its default backend is fpfast, as in the plain
# build) and the datasets prepare.sh copied ($FEDPIPE_DATA).
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
OUT=${OUT:-/tmp/fedpipe-device-out}
mkdir -p "$OUT"
F=${FEDPIPE:-/tmp/fedpipe-xla}
if [ ! -x "$F" ]; then
	xz -dc .device/fedpipe-xla.xz >"$F" && chmod +x "$F" || { echo "no .device/fedpipe-xla.xz: run scripts/device/prepare.sh and carry .device" >&2; exit 2; }
fi
export FEDPIPE_DATA=${FEDPIPE_DATA:-$PWD/.device/data}
