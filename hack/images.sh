#!/usr/bin/env bash
# KupenStack's OpenStack images, built from Debian packages without a container engine.
#
#   hack/images.sh build [NAME...]    build (mmdebstrap) and smoke-test what is not cached yet
#   hack/images.sh list               every image of the release: reference, cache key, state
#   hack/images.sh missing            the names of the release's images not cached yet, one a line
#   hack/images.sh smoke [NAME...]    run the smoke tests again on the cached images
#   hack/images.sh import [NAME...]   ctr -n k8s.io images import (builds first when needed)
#   hack/images.sh archives [NAME...] print the cached archive paths
#   hack/images.sh prepare            install what build needs (mmdebstrap) and nothing else
#
# IMAGES_RELEASE=2025.1 (default) picks images/release-$IMAGES_RELEASE.yaml: the Debian suite and each image's
# reference. Recipes are images/<name>/image.yaml. Archives are kept in
# ${KUPENSTACK_IMAGE_CACHE:-~/.cache/kupenstack/images}, keyed by a hash of the recipe directory,
# the builder's source and the suite, so a second build of an unchanged recipe takes a second.
# import talks to containerd at CONTAINERD_ADDRESS (default /run/containerd/containerd.sock).
# Needs root (mmdebstrap, chroot, unshare); installs mmdebstrap from apt when it is missing.
set -Eeuo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
IMAGES_RELEASE=${IMAGES_RELEASE:-2025.1}
CONTAINERD_ADDRESS=${CONTAINERD_ADDRESS:-/run/containerd/containerd.sock}

log() { printf '[images %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# imagebuild runs the Go builder (hack/imagebuild) from the repository root.
imagebuild() {
	local bin
	bin=$(mktemp -d)/imagebuild
	(cd "$ROOT" && go build -o "$bin" ./hack/imagebuild) || die "building hack/imagebuild failed"
	(cd "$ROOT" && "$bin" -release "$IMAGES_RELEASE" "$@")
	local rc=$?
	rm -rf "$(dirname "$bin")"
	return $rc
}

need_root() { [ "$(id -u)" = 0 ] || die "$1 needs root (mmdebstrap, chroot and unshare)"; }

need_mmdebstrap() {
	command -v mmdebstrap >/dev/null && return
	log "installing mmdebstrap from apt"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends mmdebstrap >/dev/null ||
		{ apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends mmdebstrap >/dev/null; } ||
		die "could not install mmdebstrap"
}

cmd=${1:-}; [ -n "$cmd" ] || usage; shift
case "$cmd" in
prepare)
	need_root prepare; need_mmdebstrap ;;
build)
	need_root build; need_mmdebstrap
	imagebuild build "$@" ;;
list | archives)
	imagebuild "$cmd" "$@" ;;
missing)
	imagebuild list | awk 'NR > 1 && $4 == "not" {print $1}' ;;
smoke)
	need_root smoke
	imagebuild smoke "$@" ;;
import)
	need_root import; need_mmdebstrap
	command -v ctr >/dev/null || die "ctr not found (containerd's client)"
	[ -S "$CONTAINERD_ADDRESS" ] || die "no containerd socket at $CONTAINERD_ADDRESS (set CONTAINERD_ADDRESS)"
	imagebuild build "$@" >&2
	imagebuild archives "$@" | while read -r archive; do
		log "import $archive"
		ctr --address "$CONTAINERD_ADDRESS" -n k8s.io images import "$archive" >&2
	done ;;
*) usage ;;
esac
