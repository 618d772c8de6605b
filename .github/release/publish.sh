#!/usr/bin/env bash
# Publishes the built policies (dist/, `make build`) as one release: each
# module pushed to REGISTRY/<policy>:v<version> and signed, its SPDX SBOM
# and the reconcile-guard CLI as release assets, each signed with a Sigstore
# bundle. The steps follow Kubewarden's own policy releases
# (kubewarden/policies 6a01a242, .github/workflows/release.yml, job
# `release`; kubewarden/github-actions f67f41b8, policy-release/action.yml
# and policy-build-rust/action.yml): the module signed twice by cosign
# keylessly, once in the legacy `.sig` format and once in the v3 bundle
# format; the SBOM not attached to the image (`cosign attach sbom` is the
# deprecated way) but a release asset with a `cosign sign-blob` bundle.
#
# One script, two callers:
#   .github/workflows/release.yml   SIGNING=keyless, REGISTRY=$OCI_REGISTRY/<owner>/... (the
#                                   repository secret naming the container registry)
#   make release-dry-run            SIGNING=key, a local docker-registry
#                                   (cli/tests/registry.rs, `release_dry_run`, which then
#                                   verifies what this published)
#
# Usage: publish.sh POLICY...
# Environment:
#   REGISTRY    HOST[/PATH]: policy P goes to registry://$REGISTRY/P:v$VERSION
#   VERSION     the release, without its v: every policy's version must be it
#   ASSETS      the folder to fill with the release assets
#   SIGNING     keyless (cosign, the workflow's OIDC identity) or key
#   COSIGN_KEY  with SIGNING=key: the private key (COSIGN_PASSWORD, its password)
#   CLI         the reconcile-guard CLI (default target/host/reconcile-guard)
set -euo pipefail

# No default registry: where a release goes is the caller's to say.
: "${REGISTRY:?REGISTRY is unset: the registry to publish to, HOST[/PATH] (the release workflow sets it from the repository secret OCI_REGISTRY)}"
: "${VERSION:?}" "${ASSETS:?}" "${SIGNING:?}"
CLI=${CLI:-target/host/reconcile-guard}
[ $# -gt 0 ] || { echo "usage: $0 POLICY..." >&2; exit 2; }
case $SIGNING in
  keyless) ;;
  key) : "${COSIGN_KEY:?SIGNING=key needs COSIGN_KEY}" ;;
  *) echo "SIGNING must be keyless or key, not $SIGNING" >&2; exit 2 ;;
esac
mkdir -p "$ASSETS"

# FILE's Sigstore bundle written to BUNDLE, as cosign sign-blob writes it.
# With a key and no cosign installed, it is left out, saying so.
sign_blob() {
  local file=$1 bundle=$2
  case $SIGNING in
    keyless)
      cosign sign-blob --yes --new-bundle-format=true --use-signing-config=true \
        --bundle "$bundle" "$file" ;;
    key)
      if command -v cosign >/dev/null; then
        cosign sign-blob --yes --key "$COSIGN_KEY" --bundle "$bundle" "$file"
        cosign verify-blob --key "${COSIGN_KEY%.key}.pub" --bundle "$bundle" "$file"
      else
        echo "skipped: $(basename "$bundle"): cosign is not installed"
      fi ;;
  esac
}

for policy in "$@"; do
  version=$(sed -n '/^\[package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' "policies/$policy/Cargo.toml")
  if [ "$version" != "$VERSION" ]; then
    echo "policies/$policy/Cargo.toml says version $version, the release is $VERSION" >&2
    exit 1
  fi
  ref=$("$CLI" push "dist/$policy.wasm" "registry://$REGISTRY/$policy:v$VERSION")
  echo "pushed $ref"
  case $SIGNING in
    keyless)
      cosign sign --yes --new-bundle-format=false --use-signing-config=false "${ref#registry://}"
      cosign sign --yes --new-bundle-format=true --use-signing-config=true "${ref#registry://}" ;;
    key)
      "$CLI" sign -k "$COSIGN_KEY" -a "release=v$VERSION" "$ref" ;;
  esac
  echo "$policy $ref" >> "$ASSETS/modules.txt"
  cp "dist/$policy.wasm" "$ASSETS/$policy.wasm"
  cp "dist/$policy.spdx.json" "$ASSETS/$policy.spdx.json"
  # Named as Kubewarden names its SBOM's bundle (policy-sbom.spdx.jsonl.bundle.sigstore).
  sign_blob "$ASSETS/$policy.spdx.json" "$ASSETS/$policy.spdx.jsonl.bundle.sigstore"
done

# The CLI: reconcile-guard (check, run, verify...), named for its platform.
cli="$ASSETS/reconcile-guard-$(uname -s | tr '[:upper:]' '[:lower:]')-$(uname -m)"
cp "$CLI" "$cli"
sign_blob "$cli" "$cli.bundle.sigstore"

(cd "$ASSETS" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort \
  | xargs sha256sum > SHA256SUMS)
echo "release v$VERSION: $(wc -l < "$ASSETS/modules.txt") modules, assets in $ASSETS"
