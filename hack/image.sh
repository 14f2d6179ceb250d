#!/usr/bin/env bash
# Builds the vcd-ccm image offline and checks the binary inside it.
#
#   hack/image.sh            build target/image/vcd-ccm-<version>.oci.tar and smoke-test it
#
# 1. a static musl binary without the demo and its simulators
#    (--no-default-features), stripped;
# 2. the image from Containerfile with buildah (vfs storage, chroot isolation:
#    no daemon, no registry), saved as an OCI archive;
# 3. `vcd-ccm --version` run inside the image, then `vcd-ccm run` inside the
#    image against vcdsim and kubesim on this host: a Node must be initialised
#    and a LoadBalancer Service get an address.
# Debian packages it needs (musl-tools, buildah) are installed when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=x86_64-unknown-linux-musl
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
REVISION=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
IMAGE="localhost/vcd-ccm:${VERSION}"
OUT=target/image
BUILDAH=(buildah --storage-driver vfs)

install_missing() {
  local missing=()
  command -v musl-gcc >/dev/null || missing+=(musl-tools)
  command -v buildah >/dev/null || missing+=(buildah)
  if ((${#missing[@]})); then
    apt-get update -qq && apt-get install -y -qq "${missing[@]}"
  fi
}

build_binary() {
  # Only the image needs the musl target; a toolchain installed before
  # rust-toolchain.toml named it lacks it.
  rustup target add "$TARGET"
  # The binary is stripped below, so line tables would be built for nothing.
  CARGO_PROFILE_RELEASE_DEBUG=false \
    cargo build --release --locked -p vcd-ccm --bin vcd-ccm --no-default-features --target "$TARGET"
  mkdir -p "$OUT/context"
  cp "target/$TARGET/release/vcd-ccm" "$OUT/context/vcd-ccm"
  strip "$OUT/context/vcd-ccm"
  cp /etc/ssl/certs/ca-certificates.crt "$OUT/context/"
  cp Containerfile "$OUT/context/"
}

build_image() {
  "${BUILDAH[@]}" bud --isolation chroot --layers=false \
    --build-arg "VERSION=$VERSION" --build-arg "REVISION=$REVISION" \
    -f "$OUT/context/Containerfile" -t "$IMAGE" "$OUT/context"
  rm -f "$OUT/vcd-ccm-$VERSION.oci.tar"
  "${BUILDAH[@]}" push "$IMAGE" "oci-archive:$OUT/vcd-ccm-$VERSION.oci.tar:$IMAGE"
  # The one layer holds the binary and the certificates, nothing else.
  local layer archive
  layer=$(du -cb "$OUT/context/vcd-ccm" "$OUT/context/ca-certificates.crt" | tail -1 | cut -f1)
  archive=$(du -b "$OUT/vcd-ccm-$VERSION.oci.tar" | cut -f1)
  echo "image $IMAGE: $((layer / 1000000)) MB uncompressed, $((archive / 1000000)) MB as an OCI archive"
}

# Set by smoke_test, read by its EXIT trap.
VCD_PID="" KUBE_PID="" CCM_PID=""

smoke_test() {
  local work ctr
  work=$(mktemp -d)
  # The simulators only answer the smoke test: the debug binaries the test
  # suite builds serve (after `cargo test --workspace` this is a no-op),
  # where a release build of them cost 7 minutes of CI.
  cargo test --locked --workspace --no-run --quiet
  target/debug/vcdsim --env-file "$work/vcdsim.env" >"$work/vcdsim.log" 2>&1 &
  VCD_PID=$!
  target/debug/kubesim --listen 127.0.0.1:16443 --kubeconfig-out "$work/kubeconfig" >"$work/kubesim.log" 2>&1 &
  KUBE_PID=$!
  trap 'kill $VCD_PID $KUBE_PID $CCM_PID 2>/dev/null || true; "${BUILDAH[@]}" rm -a >/dev/null 2>&1 || true' EXIT
  for _ in $(seq 50); do [[ -s "$work/vcdsim.env" && -s "$work/kubeconfig" ]] && break; sleep 0.2; done
  [[ -s "$work/vcdsim.env" && -s "$work/kubeconfig" ]] || {
    echo "vcdsim or kubesim did not start:" >&2; cat "$work/vcdsim.log" "$work/kubesim.log" >&2; exit 1
  }
  # shellcheck disable=SC1091
  source "$work/vcdsim.env"
  mkdir -p "$work/basic-auth"
  printf '%s/%s' "$VCDSIM_ORG" "$VCDSIM_USER" >"$work/basic-auth/username"
  printf '%s' "$VCDSIM_PASSWORD" >"$work/basic-auth/password"
  : >"$work/basic-auth/refreshToken"
  cat >"$work/vcloud-ccm-config.yaml" <<CONFIG
vcd:
  host: $VCDSIM_URL
  org: $VCDSIM_ORG
  vdc: vdc1
loadbalancer:
  network: net1
  enableVirtualServiceSharedIP: true
clusterid: NO_RDE_image-smoke-test
vAppName: cluster1
CONFIG
  chmod -R a+rX "$work"
  export KUBECONFIG="$work/kubeconfig"
  kubectl create -f - >/dev/null <<'OBJECTS'
apiVersion: v1
kind: Node
metadata: {name: worker-0}
spec:
  taints: [{key: node.cloudprovider.kubernetes.io/uninitialized, value: "true", effect: NoSchedule}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  type: LoadBalancer
  ports: [{port: 80, nodePort: 30080, protocol: TCP}]
OBJECTS
  kubectl patch node worker-0 --subresource=status --type=merge \
    -p '{"status":{"addresses":[{"type":"InternalIP","address":"10.0.0.11"}],"conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null

  ctr=$("${BUILDAH[@]}" from "$IMAGE")
  echo "inside the image: $("${BUILDAH[@]}" run --isolation chroot "$ctr" -- /vcd-ccm --version)"
  "${BUILDAH[@]}" run --isolation chroot --network host --user 65532:65532 \
    -v "$work:/work:ro" "$ctr" -- /vcd-ccm run \
    --cloud-config=/work/vcloud-ccm-config.yaml --credentials-dir=/work/basic-auth \
    --kubeconfig=/work/kubeconfig --leader-elect=false --secure-port=0 \
    --logging-format=json >"$work/vcd-ccm.log" 2>&1 &
  CCM_PID=$!
  local ok=""
  for _ in $(seq 120); do
    if [[ -n $(kubectl get node worker-0 -o jsonpath='{.spec.providerID}') &&
          -n $(kubectl get svc web -o jsonpath='{.status.loadBalancer.ingress[0].ip}') ]]; then
      ok=yes; break
    fi
    sleep 1
  done
  if [[ -z $ok ]]; then
    echo "smoke test failed; vcd-ccm log:" >&2; tail -40 "$work/vcd-ccm.log" >&2; exit 1
  fi
  local pid
  pid=$(pgrep -f '^/vcd-ccm run' | head -1 || true)
  [[ -n $pid ]] && echo "vcd-ccm in the image: peak resident memory $(awk '/VmHWM/ {print $2, $3}' "/proc/$pid/status")"
  echo "smoke test: Node worker-0 is $(kubectl get node worker-0 -o jsonpath='{.spec.providerID}'), Service web is at $(kubectl get svc web -o jsonpath='{.status.loadBalancer.ingress[0].ip}')"
}

install_missing
build_binary
build_image
smoke_test
