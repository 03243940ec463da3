#!/usr/bin/env bash
# KupenStack's test guest: a small bootable disk image for OpenStack VMs, built from Debian packages.
#
#   hack/guest-image.sh build    build guest.raw when it is not cached; print its absolute path
#   hack/guest-image.sh test     build, then boot it in QEMU and check the console contract
#   hack/guest-image.sh path     print the path guest.raw has (or would have) in the cache
#
# The image is a raw disk: an unpartitioned FAT file system that syslinux boots (SeaBIOS starts
# sector 0), holding Debian's cloud kernel and an initramfs with busybox, dropbear and the virtio
# modules; the recipe is images/guest/ (its /init documents what the guest prints on the console).
# No loop device, mount or container: apt-get download, dpkg-deb -x, cpio, mkfs.vfat, mtools, syslinux.
# The cache is ${KUPENSTACK_GUEST_CACHE:-~/.cache/kupenstack/guest}/<sha256>/guest.raw, the hash
# covering this script, images/guest/ and the exact Debian package versions, so a second build is
# instant. Installs what it needs from apt (cpio kmod dosfstools mtools syslinux; for test
# qemu-system-x86 and openssh-client). test: GUEST_TEST_ACCEL=kvm|tcg (default: kvm when /dev/kvm
# is usable; kvm_pvm is not), GUEST_TEST_TIMEOUT seconds to "ready" (default 60 with KVM, 240 with
# TCG); it uses QEMU's user network (restrict=on: DHCP from QEMU, nothing leaves the host), answers
# 169.254.169.254:80 with a fake meta_data.json and user_data (guestfwd), checks the console, the
# web page, an SSH login with the metadata's key, and the power button. Exits 0 when all pass.
# See docs/guest-image.md.
set -Eeuo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SELF="$ROOT/hack/guest-image.sh"
RECIPE="$ROOT/images/guest"
CACHE=${KUPENSTACK_GUEST_CACHE:-$HOME/.cache/kupenstack/guest}
KERNEL_META=linux-image-cloud-amd64

log() { printf '[guest-image %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
usage() { awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0" >&2; exit 2; }

# apt_install CMD... PKG...: install the packages (no recommends) unless every command exists.
apt_install() {
	local cmds=() pkgs=() a missing=
	for a in "$@"; do case "$a" in cmd:*) cmds+=("${a#cmd:}") ;; *) pkgs+=("$a") ;; esac; done
	for a in "${cmds[@]}"; do [ -e "$a" ] || command -v "$a" >/dev/null || missing=1; done
	[ -n "$missing" ] || return 0
	[ "$(id -u)" = 0 ] || die "needs ${pkgs[*]} (apt-get install as root)"
	log "installing ${pkgs[*]} from apt"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${pkgs[@]}" >/dev/null ||
		{ apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${pkgs[@]}" >/dev/null; } ||
		die "could not install ${pkgs[*]}"
}

build_tools() {
	apt_install cmd:cpio cmd:/sbin/depmod cmd:mkfs.vfat cmd:mcopy cmd:syslinux \
		cmd:/usr/lib/syslinux/mbr/mbr.bin cmd:objdump cmd:readelf cmd:gzip \
		cpio kmod dosfstools mtools syslinux syslinux-common binutils gzip
}

# kernel_pkg: the versioned kernel package the cloud meta-package depends on.
kernel_pkg() {
	apt-cache depends "$KERNEL_META" 2>/dev/null | awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ {print $2; exit}'
}

# lib_pkgs PKG: the packages PKG depends on, recursively (their libraries are looked up there).
lib_pkgs() {
	apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
		--no-replaces --no-enhances "$1" 2>/dev/null | grep -v '^[ <]' | grep -vx "$1" | LC_ALL=C sort -u
}

# resolve_packages sets PKGS (what goes into the guest) and URIS (apt's exact files: URL, name,
# size, SHA256), running apt-get update once if the lists do not know them.
resolve_packages() {
	local try kpkg fp memo
	# apt's answer only changes with its lists, its configuration or what is installed: remember it
	# per state so that a cached build does not wait for apt-cache (seconds on a busy machine).
	fp=$({
		sha256sum <"$SELF"
		stat -c '%n %s %Y' /var/lib/apt/lists/*Packages* /var/lib/dpkg/status /etc/apt/sources.list \
			/etc/apt/sources.list.d/* /etc/apt/preferences /etc/apt/preferences.d/* 2>/dev/null || true
	} | sha256sum | cut -d' ' -f1)
	memo="$CACHE/resolved/$fp"
	if [ -s "$memo" ]; then
		mapfile -t PKGS < <(sed -n 's/^pkg //p' "$memo")
		URIS=$(sed -n 's/^uri //p' "$memo")
		return 0
	fi
	for try in 1 2; do
		kpkg=$(kernel_pkg)
		if [ -n "$kpkg" ]; then
			PKGS=("$kpkg" busybox-static dropbear-bin $(lib_pkgs dropbear-bin))
			if URIS=$(apt-get download --print-uris "${PKGS[@]}" 2>/dev/null) && [ -n "$URIS" ]; then
				mkdir -p "$CACHE/resolved"
				{ printf 'pkg %s\n' "${PKGS[@]}"; printf '%s\n' "$URIS" | sed 's/^/uri /'; } >"$memo.$$"
				mv -f "$memo.$$" "$memo"
				return 0
			fi
		fi
		[ "$try" = 1 ] || break
		log "apt lists do not resolve the packages; apt-get update"
		apt-get update >/dev/null || die "apt-get update failed"
	done
	die "cannot resolve the guest's packages (${KERNEL_META}, busybox-static, dropbear-bin) from apt"
}

# recipe_hash: sha256 of this script, images/guest/ (paths, modes, contents), the package files
# and the versions of the tools that write the image.
recipe_hash() {
	{
		echo "script"; sha256sum <"$SELF"
		(cd "$RECIPE" && find . -type f | LC_ALL=C sort | while read -r f; do
			printf '%s %s ' "$f" "$([ -x "$f" ] && echo x || echo -)"; sha256sum <"$f"
		done)
		echo "packages"; printf '%s\n' "$URIS" | LC_ALL=C sort
		echo "tools"; dpkg-query -W cpio kmod dosfstools mtools syslinux syslinux-common gzip 2>/dev/null
	} | sha256sum | cut -d' ' -f1
}

# fetch_debs DIR: the package files into the shared download cache (kept by file name, checked
# against apt's SHA256), linked into DIR.
fetch_debs() {
	local dir=$1 debs="$CACHE/debs" url file size sum
	mkdir -p "$debs"
	while read -r url file size sum; do
		sum=${sum#SHA256:}
		if ! [ -f "$debs/$file" ] || ! echo "$sum  $debs/$file" | sha256sum -c --status; then
			log "download $file ($((size / 1024)) KiB)"
			rm -f "$debs/$file"
			(cd "$debs" && apt-get download -o APT::Sandbox::User=root "$(pkg_of "$file")" >/dev/null) ||
				die "apt-get download $(pkg_of "$file") failed"
			echo "$sum  $debs/$file" | sha256sum -c --status || die "$file: SHA256 differs from apt's"
		fi
		ln -f "$debs/$file" "$dir/$file" 2>/dev/null || cp "$debs/$file" "$dir/$file"
	done < <(printf '%s\n' "$URIS" | tr -d "'")
}

# pkg_of FILE: name=version of a .deb file name (name_version_arch.deb, version URL-escaped).
pkg_of() {
	local f=${1%.deb} name ver
	name=${f%%_*}; ver=${f#*_}; ver=${ver%_*}
	printf '%s=%s' "$name" "$(printf '%b' "${ver//%/\\x}")"
}

# newc_entry NAME MODE RDEVMAJOR RDEVMINOR: one empty cpio "newc" entry (for /dev/console, which the
# kernel opens for /init before anything is mounted; made without mknod, so without root).
newc_entry() {
	local name=$1 mode=$2 maj=$3 min=$4 n pad
	n=$((${#name} + 1))
	printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X' \
		0 "$mode" 0 0 1 0 0 0 0 "$maj" "$min" "$n" 0
	printf '%s\0' "$name"
	pad=$(((4 - (110 + n) % 4) % 4))
	head -c "$pad" /dev/zero
}

# copy_elf ROOTFS TREE FILE DEST: FILE (path inside TREE, the extracted packages) to DEST in
# ROOTFS with every shared library it needs (DT_NEEDED, recursively) and the dynamic loader.
copy_elf() {
	local rootfs=$1 tree=$2 file=$3 dest=$4 lib found d interp
	install -D -m 0755 "$tree$file" "$rootfs$dest"
	interp=$(readelf -l "$tree$file" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
	if [ -n "$interp" ] && ! [ -e "$rootfs$interp" ]; then
		install -D -m 0755 "$(tree_path "$tree" "$interp")" "$rootfs/lib/x86_64-linux-gnu/$(basename "$interp")"
		if [ "$interp" != "/lib/x86_64-linux-gnu/$(basename "$interp")" ]; then
			mkdir -p "$rootfs$(dirname "$interp")"
			ln -sf "/lib/x86_64-linux-gnu/$(basename "$interp")" "$rootfs$interp"
		fi
	fi
	for lib in $(objdump -p "$tree$file" | awk '$1 == "NEEDED" {print $2}'); do
		[ -e "$rootfs/lib/x86_64-linux-gnu/$lib" ] && continue
		found=
		for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib /usr/lib; do
			if [ -e "$tree$d/$lib" ]; then found=$d/$lib; break; fi
		done
		[ -n "$found" ] || die "$file needs $lib, which none of the packages (${PKGS[*]}) has"
		copy_elf "$rootfs" "$tree" "$(tree_path "$tree" "$found" | sed "s|^$tree||")" "/lib/x86_64-linux-gnu/$lib"
	done
}

# tree_path TREE PATH: PATH inside TREE with its symbolic links followed inside TREE.
tree_path() {
	local tree=$1 p=$2 t i
	for i in 1 2 3 4 5 6 7 8; do
		[ -L "$tree$p" ] || break
		t=$(readlink "$tree$p")
		case "$t" in /*) p=$t ;; *) p=$(dirname "$p")/$t ;; esac
	done
	printf '%s%s' "$tree" "$p"
}

# build_image OUT: guest.raw (and its manifest) into the directory OUT.
build_image() {
	local out=$1 w="$1/.work" x kver moddir vmlinuz m path
	mkdir -p "$w/debs" "$w/x" "$w/rootfs"
	fetch_debs "$w/debs"
	for deb in "$w"/debs/*.deb; do dpkg-deb -x "$deb" "$w/x"; done
	x="$w/x"

	vmlinuz=$(ls "$x"/boot/vmlinuz-* | head -n 1)
	kver=${vmlinuz##*/vmlinuz-}
	moddir=$(dirname "$(find "$x" -path "*/modules/$kver/modules.builtin" | head -n 1)")
	[ -d "$moddir" ] || die "no modules for kernel $kver"
	log "kernel $kver ($(($(stat -c %s "$vmlinuz") / 1024)) KiB)"

	# rootfs: the recipe's files, busybox and its applets, dropbear and its libraries.
	local r="$w/rootfs"
	cp -a "$RECIPE/rootfs/." "$r/"
	chmod 0755 "$r/init" "$r/etc/udhcpc.script" "$r/etc/acpi/PWRF/00000080"
	chmod 0600 "$r/etc/shadow"
	mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,run,tmp,etc/dropbear,srv/www,var/log} "$r/root/.ssh"
	chmod 0700 "$r/root" "$r/root/.ssh"
	ln -s /run "$r/var/run"
	install -m 0755 "$x/bin/busybox" "$r/bin/busybox"
	for path in $("$x/bin/busybox" --list-full); do
		[ -e "$r/$path" ] || ln -s /bin/busybox "$r/$path"
	done
	copy_elf "$r" "$x" /usr/sbin/dropbear /usr/sbin/dropbear
	copy_elf "$r" "$x" /usr/bin/dropbearkey /usr/bin/dropbearkey

	# modules: the recipe's list and their dependencies (modules.dep of the whole kernel), the ones
	# the kernel has built in left out; depmod again for the initramfs' modprobe.
	depmod -b "${moddir%/lib/modules/$kver}" "$kver" 2>/dev/null ||
		depmod -b "${moddir%/modules/$kver}" "$kver"
	local rmod="$r/lib/modules/$kver" want=() seen=" " line dep
	mkdir -p "$rmod"
	cp "$moddir"/modules.builtin* "$moddir/modules.order" "$rmod/"
	: >"$r/etc/modules"
	for m in $(grep -v '^#' "$RECIPE/modules"); do
		if grep -Eq "/${m//_/[-_]}\.ko(\.[a-z]+)?\$" "$moddir/modules.builtin"; then
			log "module $m: built in"
			continue
		fi
		line=$(grep -E "(^|/)${m//_/[-_]}\.ko(\.[a-z]+)?:" "$moddir/modules.dep") || die "module $m is not in kernel $kver"
		for dep in ${line#*:} ${line%%:*}; do
			case "$seen" in *" $dep "*) continue ;; esac
			seen="$seen$dep "
			install -D -m 0644 "$moddir/$dep" "$rmod/$dep"
			case "$dep" in
			*.ko.xz) xz -d "$rmod/$dep" ;;
			*.ko.zst) zstd -q -d --rm "$rmod/$dep" ;;
			*.ko.gz) gzip -d "$rmod/$dep" ;;
			esac
		done
		echo "$m" >>"$r/etc/modules"
	done
	depmod -b "$r" "$kver" 2>/dev/null || die "depmod for the initramfs failed"
	log "modules: $(tr '\n' ' ' <"$r/etc/modules")($(find "$rmod" -name '*.ko' | wc -l) files)"

	# initramfs: /dev/console first (hand-made entry), then the tree; gzip.
	{
		newc_entry dev $((0040755)) 0 0
		newc_entry dev/console $((0020600)) 5 1
		newc_entry TRAILER!!! 0 0 0
		(cd "$r" && find . -mindepth 1 | LC_ALL=C sort | sed 's|^\./||' |
			cpio -o -H newc -R 0:0 --reproducible --quiet)
	} | gzip -9 -n >"$w/initrd.gz"
	log "initramfs $(($(stat -c %s "$w/initrd.gz") / 1024)) KiB"

	# disk: FAT on the whole image (no partition table), syslinux in its boot sector.
	local img="$out/guest.raw" mib
	mib=$((($(stat -c %s "$vmlinuz") + $(stat -c %s "$w/initrd.gz") + 1048575) / 1048576 + 2))
	mkfs.vfat -C -n KUPENSTACK -i 4b530001 --invariant "$img" $((mib * 1024)) >/dev/null
	syslinux --install "$img"
	MTOOLS_SKIP_CHECK=1 mcopy -i "$img" "$vmlinuz" ::vmlinuz
	MTOOLS_SKIP_CHECK=1 mcopy -i "$img" "$w/initrd.gz" ::initrd.gz
	MTOOLS_SKIP_CHECK=1 mcopy -i "$img" "$RECIPE/syslinux.cfg" ::syslinux.cfg
	{
		echo "kernel $kver"
		printf '%s\n' "$URIS" | tr -d "'" | awk '{print $2, $4}'
		echo "guest.raw $(stat -c %s "$img") bytes"
	} >"$out/manifest.txt"
	rm -rf "$w"
}

cmd_build() {
	build_tools
	resolve_packages
	local hash dir tmp
	hash=$(recipe_hash)
	dir="$CACHE/$hash"
	if [ -f "$dir/guest.raw" ]; then
		echo "$dir/guest.raw"
		return 0
	fi
	mkdir -p "$CACHE"
	tmp=$(mktemp -d "$CACHE/.build.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	local t0=$SECONDS
	log "building $hash"
	build_image "$tmp"
	chmod 0755 "$tmp"
	mv -T "$tmp" "$dir" 2>/dev/null || [ -f "$dir/guest.raw" ] || die "could not move the image to $dir"
	rm -rf "$tmp"
	trap - EXIT
	log "built $dir/guest.raw ($(($(stat -c %s "$dir/guest.raw") / 1024)) KiB) in $((SECONDS - t0)) s"
	echo "$dir/guest.raw"
}

cmd_path() {
	build_tools
	resolve_packages
	echo "$CACHE/$(recipe_hash)/guest.raw"
}

# free_port: a TCP port on 127.0.0.1 nobody listens on now.
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

cmd_test() {
	local img
	img=$(cmd_build)
	apt_install cmd:qemu-system-x86_64 qemu-system-x86
	apt_install cmd:ssh cmd:ssh-keygen openssh-client
	PY=/usr/bin/python3
	apt_install cmd:$PY python3

	local accel=${GUEST_TEST_ACCEL:-}
	if [ -z "$accel" ]; then
		# kvm_pvm (KVM without VMX/SVM, for PVM-aware guest kernels) opens fine but fails in
		# SeaBIOS/syslinux ("KVM internal error ... emulation failure"): not usable for a stock guest.
		if [ -c /dev/kvm ] && (exec 9<>/dev/kvm) 2>/dev/null && ! [ -d /sys/module/kvm_pvm ]; then
			accel=kvm
		else
			accel=tcg
		fi
	fi
	local timeout=${GUEST_TEST_TIMEOUT:-$([ "$accel" = kvm ] && echo 60 || echo 240)}
	local why=
	[ "$accel" = tcg ] && why=" (software emulation; $([ -d /sys/module/kvm_pvm ] && echo '/dev/kvm is kvm_pvm, which cannot run a stock guest' || echo 'no usable /dev/kvm'))"
	log "accelerator: $accel$why, timeout ${timeout} s"

	TEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/kupenstack-guest-test.XXXXXX")
	local t=$TEST_DIR
	trap test_cleanup EXIT
	trap 'exit 130' INT TERM

	# The fake metadata service: QEMU runs serve.py for each guest connection to 169.254.169.254:80
	# (guestfwd ... cmd:), the socket on its stdin; http.server answers from $t/www and logs to
	# $t/http.log. QEMU's network is 169.254.0.0/16 because guestfwd only works inside it.
	local host=kupenstack-guest-test.novalocal key1
	ssh-keygen -q -t ed25519 -N '' -C k1@test -f "$t/id_ed25519"
	key1=$(cut -d' ' -f1-2 "$t/id_ed25519.pub")
	mkdir -p "$t/www/openstack/latest"
	cat >"$t/www/openstack/latest/meta_data.json" <<-EOF
		{"uuid": "5a8c0ffe-0000-4000-8000-00000000cafe", "meta": {"hostname": "not-this-one", "role": "test"}, "public_keys": {"k1": "$key1 k1@test\n", "k2": "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQKupenStackTestKeyTwo k2@test"}, "keys": [{"name": "k1", "type": "ssh", "data": "$key1 k1@test\n"}, {"name": "k2", "type": "ssh", "data": "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQKupenStackTestKeyTwo k2@test"}], "hostname": "$host", "name": "kupenstack-guest-test", "launch_index": 0, "availability_zone": "nova", "random_seed": "S3VwZW5TdGFjaw==", "project_id": "0123456789abcdef0123456789abcdef", "devices": [], "dedicated_cpus": []}
	EOF
	cat >"$t/www/openstack/latest/user_data" <<-'EOF'
		#!/bin/sh
		echo "TEST userdata hostname=$(hostname) authorized_keys=$(grep -c '^ssh-' /root/.ssh/authorized_keys)"
		exit 3
	EOF
	cat >"$t/serve.py" <<-'EOF'
		import functools, http.server, socket, sys
		class H(http.server.SimpleHTTPRequestHandler):
		    def log_message(self, fmt, *args):
		        with open(sys.argv[2], "a") as f:
		            f.write(fmt % args + "\n")
		H(socket.socket(fileno=0), ("169.254.169.254", 0), None, directory=sys.argv[1])
	EOF
	truncate -s 3M "$t/vdb.raw"
	local http_port ssh_port
	http_port=$(free_port)
	ssh_port=$(free_port)

	# QEMU's default CPU model: -cpu host fails under nested KVM here (MSR 0x10a).
	local accel_args=(-accel "$accel")
	local t0 t_ready= elapsed
	t0=$(date +%s.%N)
	qemu-system-x86_64 "${accel_args[@]}" -m 256 -smp 1 -nographic -monitor "unix:$t/monitor.sock,server=on,wait=off" \
		-serial "file:$t/console.log" -no-reboot -pidfile "$t/qemu.pid" \
		-drive "file=$img,if=virtio,format=raw,snapshot=on" \
		-drive "file=$t/vdb.raw,if=virtio,format=raw" \
		-nic "user,model=virtio-net-pci,restrict=on,net=169.254.0.0/16,host=169.254.0.2,dhcpstart=169.254.0.15,guestfwd=tcp:169.254.169.254:80-cmd:$PY $t/serve.py $t/www $t/http.log,hostfwd=tcp:127.0.0.1:$http_port-:80,hostfwd=tcp:127.0.0.1:$ssh_port-:22" \
		</dev/null >"$t/qemu.out" 2>&1 &
	local qpid=$!
	while :; do
		elapsed=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
		if grep -q '^KUPENSTACK-GUEST ready' "$t/console.log" 2>/dev/null; then t_ready=$elapsed; break; fi
		kill -0 "$qpid" 2>/dev/null || break
		awk -v e="$elapsed" -v m="$timeout" 'BEGIN {exit !(e > m)}' && break
		sleep 0.2
	done

	# The serial line ends lines with CR LF.
	tr -d '\r' <"$t/console.log" >"$t/console.txt" 2>/dev/null || true
	local fails=0
	check() { # check DESCRIPTION COMMAND...: run it, count and show a failure
		if "${@:2}" >/dev/null 2>&1; then log "ok   $1"; else log "FAIL $1"; fails=$((fails + 1)); fi
	}
	console() { grep -qxF -- "$1" "$t/console.txt"; }
	check "qemu still running" kill -0 "$qpid"
	check "console: ready (${t_ready:-not within ${timeout} s})" test -n "$t_ready"
	# restrict=on: QEMU's DHCP sends no router (nor DNS) option
	check "console: KUPENSTACK-GUEST dhcp eth0 169.254.0.15/16 gw none" console "KUPENSTACK-GUEST dhcp eth0 169.254.0.15/16 gw none"
	check "console: KUPENSTACK-GUEST metadata hostname=$host keys=2" console "KUPENSTACK-GUEST metadata hostname=$host keys=2"
	check "console: TEST userdata hostname=$host authorized_keys=2" console "TEST userdata hostname=$host authorized_keys=2"
	check "console: KUPENSTACK-GUEST userdata exit=3" console "KUPENSTACK-GUEST userdata exit=3"
	check "console: KUPENSTACK-GUEST disk vdb 3145728" console "KUPENSTACK-GUEST disk vdb 3145728"
	check "console: KUPENSTACK-GUEST hostkey ssh-ed25519 ..." grep -qE '^KUPENSTACK-GUEST hostkey ssh-ed25519 [A-Za-z0-9+/=]+$' "$t/console.txt"
	check "metadata server: GET meta_data.json and user_data" grep -q 'GET /openstack/latest/user_data' "$t/http.log"
	if [ -n "$t_ready" ]; then
		check "http://guest/ (port 80) answers the hostname" "$PY" -c "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:$http_port/', timeout=10).read().decode().strip() != '$host')"
		check "ssh (port 22) answers SSH-2.0-dropbear" "$PY" -c "import socket, sys; s = socket.create_connection(('127.0.0.1', $ssh_port), 10); s.settimeout(10); sys.exit(not s.recv(64).startswith(b'SSH-2.0-dropbear'))"
		# The host key from the console is the one SSH presents; the metadata's key logs in.
		sed -n "s/^KUPENSTACK-GUEST hostkey /[127.0.0.1]:$ssh_port /p" "$t/console.txt" >"$t/known_hosts"
		check "ssh root@guest with the metadata's key and the console's host key: hostname" test_ssh "$t" "$ssh_port" "$host"
		# ACPI power button (nova's graceful stop): the guest says so and QEMU exits.
		"$PY" -c "
import socket, time
s = socket.socket(socket.AF_UNIX); s.connect('$t/monitor.sock'); s.settimeout(5)
s.recv(4096); s.sendall(b'system_powerdown\n'); time.sleep(1); s.recv(4096)" 2>/dev/null || true
		local i
		for i in $(seq 150); do kill -0 "$qpid" 2>/dev/null || break; sleep 0.2; done
		tr -d '\r' <"$t/console.log" >"$t/console.txt"
		check "power button: KUPENSTACK-GUEST poweroff and QEMU exits (in ~$((i / 5)) s)" eval '! kill -0 "$qpid" && console "KUPENSTACK-GUEST poweroff"'
	fi
	log "console (KUPENSTACK-GUEST lines):"
	grep -a 'KUPENSTACK-GUEST\|^TEST ' "$t/console.txt" | sed 's/^/    /' >&2 || true
	if [ "$fails" -gt 0 ]; then
		log "the whole console:"; sed 's/^/    /' "$t/console.txt" >&2 || true
		sed 's/^/    qemu: /' "$t/qemu.out" >&2 || true
		log "FAILED: $fails check(s) ($accel)"
		return 1
	fi
	log "PASS: $accel, ready ${t_ready} s after QEMU started; image $(($(stat -c %s "$img") / 1024)) KiB"
}

test_ssh() { # test_ssh DIR PORT HOSTNAME
	local out
	out=$(ssh -n -i "$1/id_ed25519" -p "$2" -o BatchMode=yes -o ConnectTimeout=20 -o StrictHostKeyChecking=yes \
		-o UserKnownHostsFile="$1/known_hosts" -o GlobalKnownHostsFile=/dev/null -o LogLevel=ERROR \
		root@127.0.0.1 hostname) && [ "$out" = "$3" ]
}

test_cleanup() {
	local t=$TEST_DIR pid
	if [ -f "$t/qemu.pid" ] && pid=$(cat "$t/qemu.pid" 2>/dev/null) && [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
		kill -9 "$pid" 2>/dev/null || true
	fi
	wait 2>/dev/null || true
	rm -rf "$t"
}

cmd=${1:-}; [ -n "$cmd" ] || usage; shift
case "$cmd" in
build) cmd_build ;;
path) cmd_path ;;
test) cmd_test ;;
*) usage ;;
esac
