#!/usr/bin/env bash
# Runs a command under heaptrack's preload library, replacing this shell, so
# the command keeps this process id (heaptrack's own script stays in between
# as the parent, which the gateway_scale benchmark would kill and measure).
#
#   GATEWAY_SCALE_CCM_WRAPPER=$PWD/hack/heaptrack-exec.sh cargo bench -p vcd-ccm --bench gateway_scale
#   heaptrack_print -f /tmp/heaptrack.vcd-ccm.<pid>.zst   (its .fifo beside it can go)
#
# Needs the heaptrack package (apt-get install heaptrack) and zstd.
set -euo pipefail
LIB=/usr/lib/heaptrack
out="${TMPDIR:-/tmp}/heaptrack.$(basename "$1").$$"
pipe="$out.fifo"
mkfifo "$pipe"
"$LIB/libexec/heaptrack_interpret" <"$pipe" | zstd -q -c >"$out.zst" &
echo "heaptrack: $out.zst" >&2
exec env LD_PRELOAD="$LIB/libheaptrack_preload.so" DUMP_HEAPTRACK_OUTPUT="$pipe" "$@"
