#!/usr/bin/env bash
# Everything the tests need, at once: the test binaries compile (CPU-bound, minutes when cold)
# while the all-in-one cloud installs and configures (mostly I/O). Output lines are prefixed
# with [tools] or [openstack]; the first failure stops both and names its step.
#
# PREPARE_REAL_CLUSTER=1 (make test sets it) also readies what the real cluster's suites need, as
# they run last: the node's binaries (kubelet, kube-proxy, CoreDNS) compile with the others, and
# (as root) the OpenStack images of hack/images.sh build in the background, niced and detached.
# On a fresh machine that is about 25 minutes of mostly download and unpacking that would
# otherwise wait for everything else. Its log is bin/images-prebuild.log. The suites' own builds
# wait for an image the prebuild is making and take its archive (hack/imagebuild's per-image
# lock), so nothing waits for the prebuild as a whole and a failed prebuild only costs time.
# Under make test's time budget (KUPENSTACK_TEST_DEADLINE) the images build in the background
# only when all of them are cached already, that is never on a fresh machine (see below).
set -euo pipefail
cd "$(dirname "$0")/.."

groups=(envtest cluster codegen)
if [ -n "${PREPARE_REAL_CLUSTER:-}" ]; then
  groups+=(node)
fi
prebuild=
if [ -n "${PREPARE_REAL_CLUSTER:-}" ] && [ "$(id -u)" = 0 ]; then
  prebuild=1
  # Under make test's time budget with images to build (a fresh machine), the whole cloud cannot
  # fit anyway (the images alone take 25-70 min), and building them beside the compile doubled
  # it (16 to 43 min measured): what must pass would then overrun CI's 90 minutes.
  if [ -n "${KUPENSTACK_TEST_DEADLINE:-}" ]; then
    missing=$(hack/images.sh missing | wc -l)
    if [ "$missing" -gt 0 ]; then
      prebuild=
      echo "prepare-tests: $missing OpenStack images not cached: not built within make test's budget (hack/images.sh build caches them)"
    fi
  fi
fi
if [ -n "$prebuild" ]; then
  # mmdebstrap before the all-in-one's apt-get starts: two apt-gets at once would fight for dpkg's lock.
  hack/images.sh prepare
  mkdir -p bin
  setsid nohup nice -n 10 hack/images.sh build > bin/images-prebuild.log 2>&1 < /dev/null &
  echo "prepare-tests: building the OpenStack images in the background (pid $!, log bin/images-prebuild.log)"
fi

hack/install-test-tools.sh "${groups[@]}" > >(sed -u 's/^/[tools] /') 2>&1 &
tools=$!
trap 'kill "$tools" 2>/dev/null || true' EXIT

if ! hack/openstack-aio/up.sh 2>&1 | sed -u 's/^/[openstack] /'; then
  echo "prepare-tests: the OpenStack all-in-one did not come up (see the [openstack] lines above)" >&2
  exit 1
fi
if ! wait "$tools"; then
  echo "prepare-tests: building the test binaries failed (see the [tools] lines above)" >&2
  exit 1
fi
trap - EXIT
