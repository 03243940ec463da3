#!/bin/bash
# Bring the all-in-one cloud up from whatever state this machine is in: install the packages if any
# is missing, configure from scratch when the configuration scripts changed since the last
# configure (or it never ran), otherwise only start what is not running. Idempotent.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
"$AIO_DIR/install.sh"
want=$(cat "$AIO_DIR"/{lib.sh,configure.sh,bootstrap.py} | sha256sum | cut -d' ' -f1)-cinder$CINDER
if [ "$(cat "$STATE/configured" 2>/dev/null)" = "$want" ]; then
  "$AIO_DIR/start.sh"
else
  log "configuring the cloud in $STATE (about 1-2 minutes)"
  rm -f "$STATE/configured"
  "$AIO_DIR/configure.sh"
  echo "$want" >"$STATE/configured"
fi
log "cloud ready: OS_CLIENT_CONFIG_FILE=$STATE/clouds.yaml OS_CLOUD=aio"
