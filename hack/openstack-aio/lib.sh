# shellcheck shell=bash
# Shared settings and helpers; sourced by the other scripts (not run on its own).
AIO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${AIO_STATE_DIR:-/var/lib/kupenstack/openstack-aio}   # everything mutable lives here
ETC=$STATE/etc RUN=$STATE/run LOG=$STATE/log
PASS=${AIO_PASSWORD:-aio-secret}   # admin, service users and DB user; loopback only
HOST=aio                           # nova/neutron host name (port binding matches on it)
REGION=RegionOne
KS=http://127.0.0.1:5000
RABBIT=rabbit://guest:guest@127.0.0.1:5672/
SOCK=$RUN/mysql.sock
CINDER=${AIO_CINDER:-1}            # 0: leave cinder (block storage, fake driver) out
db() { echo "mysql+pymysql://openstack:$PASS@localhost/$1?unix_socket=$SOCK&charset=utf8"; }
unset $(compgen -e | grep "^OS_") || true   # stray OS_* variables would override clouds.yaml
export OS_CLIENT_CONFIG_FILE=$STATE/clouds.yaml OS_CLOUD=aio
PY=/usr/bin/python3   # Debian's python3 (not a pyenv/venv one first on PATH)

log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root"

# wait_for SECONDS DESCRIPTION COMMAND...: retry COMMAND every 0.5 s
wait_for() {
  local t=$1 what=$2; shift 2
  local end=$((SECONDS + t))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || { log "timed out after ${t}s waiting for $what"; return 1; }
    sleep 0.5
  done
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
http_ok() { curl -fsS -o /dev/null -m 5 "$1"; }   # 2xx/3xx
# pid file of a service we started; alive only if that pid still leads its own session
alive() { local p; p=$(cat "$RUN/$1.pid" 2>/dev/null) && [ "$(ps -o sid= -p "$p" 2>/dev/null | tr -d ' ')" = "$p" ]; }

# rabbitmqctl_aio runs rabbitmqctl against the all-in-one's broker: its node name and cookie (the
# Debian wrapper switches to the rabbitmq user's home, so the cookie is passed explicitly).
rabbitmqctl_aio() {
  ERL_EPMD_ADDRESS=127.0.0.1 rabbitmqctl -n rabbit@localhost --erlang-cookie "$(cat "$STATE/rabbitmq/.erlang.cookie")" "$@"
}
