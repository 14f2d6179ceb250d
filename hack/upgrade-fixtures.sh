#!/usr/bin/env bash
# Records what a release leaves in VCD and Kubernetes, for the upgrade test
# (host/tests/it/upgrade.rs): builds vcd-ccm at <git ref> in a scratch
# worktree, runs it against vcdsim and kubesim through the ignored test
# upgrade::record_fixtures, and writes host/tests/fixtures/upgrade/*.json.
# Run it at each release with the release being made, so the next one is
# tested against it.
#
#   hack/upgrade-fixtures.sh <git ref>
set -euo pipefail
cd "$(dirname "$0")/.."

REF=${1:?usage: hack/upgrade-fixtures.sh <git ref of the release>}
WORK=$(mktemp -d)
trap 'git worktree remove --force "$WORK/src" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT

git worktree add --detach "$WORK/src" "$REF" >/dev/null
(cd "$WORK/src" && cargo build --locked -p vcd-ccm --bin vcd-ccm --target-dir "$WORK/target")
VCD_CCM_RELEASE_BINARY="$WORK/target/debug/vcd-ccm" \
  VCD_CCM_RELEASE="$(git describe --always --tags "$REF")" \
  cargo test --locked -p vcd-ccm --test it upgrade::record_fixtures -- --ignored --nocapture
