#!/bin/bash
# Install the Debian 12 (bookworm) packages for a one-machine OpenStack Zed (cinder too unless
# AIO_CINDER=0). Idempotent: exits at once when everything is installed.
# Package maintainer scripts must not configure databases, register endpoints or start services:
# debconf answers + policy-rc.d take care of that; configure.sh writes the configs itself.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "install.sh: must run as root" >&2; exit 1; }
grep -q bookworm /etc/os-release || echo "install.sh: warning: not Debian 12 (bookworm); untested" >&2

PKGS=(
  mariadb-server python3-pymysql rabbitmq-server
  keystone glance-api placement-api
  nova-api nova-conductor nova-scheduler   # nova-compute runs from python3-nova (see README)
  neutron-api neutron-rpc-server
  python3-openstackclient uwsgi-core uwsgi-plugin-python3 curl
)
[ "${AIO_CINDER:-1}" = 1 ] && PKGS+=(cinder-api cinder-scheduler cinder-volume)
export DEBIAN_FRONTEND=noninteractive

missing=()
for p in "${PKGS[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then echo "install.sh: all packages already installed"; exit 0; fi

# debconf: no dbconfig-common database, no endpoint registration, no keystone/rabbit set-up by the
# maintainer scripts (the packages' defaults too; answered in case an older answer says otherwise)
{ for p in keystone glance-common nova-common nova-api placement-common neutron-common cinder-common; do
    echo "$p $p/dbconfig-install boolean false"
  done
  for s in keystone glance nova novaapi placement neutron cinder; do
    for q in configure_db configure_api-endpoint configure_ksat configure_rabbit register-endpoint; do
      echo "$s $s/$q boolean false"
    done
  done; } | debconf-set-selections

# policy-rc.d: keep invoke-rc.d from starting any service during the install
created_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && created_policy=1
fi
cleanup() { [ "$created_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d; true; }
trap cleanup EXIT

apt-get update -q
apt-get install -y -q --no-install-recommends \
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}"
echo "install.sh: installed ${#missing[@]} packages"
