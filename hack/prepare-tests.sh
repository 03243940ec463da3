#!/usr/bin/env bash
# Everything the tests need, at once: the test binaries compile (CPU-bound, minutes when cold)
# while the all-in-one cloud installs and configures (mostly I/O). Output lines are prefixed
# with [tools] or [openstack]; the first failure stops both and names its step.
set -euo pipefail
cd "$(dirname "$0")/.."

hack/install-test-tools.sh envtest cluster codegen > >(sed -u 's/^/[tools] /') 2>&1 &
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
