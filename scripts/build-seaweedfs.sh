#!/usr/bin/env bash
# Builds SeaweedFS's `weed` (the S3 server the object-store tests run against) from the Go module
# proxy into a cache outside the clone, keyed by version; a cached binary is reused. Prints its path.
# `go install …/weed@version` refuses the module (its go.mod has replace directives), so the module
# is downloaded and built as the main module, in its own folder of the module cache.
set -euo pipefail
VERSION="${FAHEEM_SEAWEEDFS_VERSION:-v0.0.0-20261109003541-7506e5f91cd6}"
CACHE="${FAHEEM_SEAWEEDFS_CACHE:-$HOME/.cache/faheem}/seaweedfs-$VERSION"
WEED="$CACHE/weed"
if [ -x "$WEED" ] && "$WEED" version >/dev/null 2>&1; then
  echo "$WEED"
  exit 0
fi
command -v go >/dev/null || { echo "build-seaweedfs: no Go toolchain (needed to build weed $VERSION)" >&2; exit 1; }
MODULE_DIR="$(go mod download -json "github.com/seaweedfs/seaweedfs@$VERSION" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);if(j.Error){console.error(j.Error);process.exit(1)}console.log(j.Dir)})')"
mkdir -p "$CACHE"
# Built beside the cache entry, then renamed: a run cut short never leaves a half-written binary.
(cd "$MODULE_DIR" && GOFLAGS=-buildvcs=false go build -trimpath -ldflags "-s -w" -o "$WEED.partial" ./weed) >&2
mv "$WEED.partial" "$WEED"
echo "$WEED"
