#!/usr/bin/env bash
# Checks colocd's packages as an operator would meet them (make test runs
# it as check-package):
#   1. make package builds the .deb and .rpm (nfpm);
#   2. lintian finds no error in the .deb;
#   3. the .deb is unpacked into a scratch root, and its sysusers.d and
#      tmpfiles.d entries applied there (systemd-sysusers, systemd-tmpfiles
#      --root, as its postinst does): user colocd, /etc/colocd root:colocd
#      0750, the conffile root:colocd 0640;
#   4. the service user, chrooted there, reads its configuration (colocd
#      config check at the default path); with /etc/colocd root:root, as
#      the old README's recipe left it, it gets exit status 2 (a
#      configuration error, which the unit does not restart);
#   5. systemd-analyze verify on the unit it installed; systemd-analyze
#      security on it, alone and with the JVM drop-in, which turns off
#      MemoryDenyWriteExecute= (a JVM fails under it: shown with the
#      kernel's equivalent, PR_SET_MDWE, and `java -version`);
#   6. the .rpm holds the same files (rpm -qlp) and its scripts.
# Each tool comes from Debian (make tools: lintian, rpm, systemd, a JRE).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf 'check-package: %s\n' "$*"; }
fail() { printf 'check-package: FAIL: %s\n' "$*"; exit 1; }
for t in lintian systemd-analyze systemd-sysusers systemd-tmpfiles dpkg-deb rpm chroot java python3; do
  command -v "$t" >/dev/null || fail "$t is not installed (make tools installs it)"
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"

./scripts/package.sh "$work/dist" >/dev/null 2>"$work/nfpm.log" || { cat "$work/nfpm.log"; fail "make package"; }
deb=$(ls "$work"/dist/colocd_*.deb)
rpmf=$(ls "$work"/dist/colocd-*.rpm)
log "built $(basename "$deb") and $(basename "$rpmf")"

# 2. lintian: its exit status is non-zero on an error.
if ! out=$(lintian --fail-on error "$deb" 2>&1); then
  echo "$out"; fail "lintian found errors in $(basename "$deb")"
fi
log "lintian: no errors ($(grep -c '^W: ' <<<"$out" || true) warnings)"

# 3. The scratch root.
R=$work/root
mkdir -p "$R/etc"
dpkg-deb -x "$deb" "$R"
: >"$R/etc/passwd"; : >"$R/etc/group"
systemd-sysusers --root="$R" >/dev/null 2>&1
# A tokens file as the operator would write it before the first start.
echo "ops-secret-1234567890:ops:admin" >"$R/etc/colocd/tokens"
systemd-tmpfiles --root="$R" --create colocd.conf
uid=$(awk -F: '$1=="colocd"{print $3}' "$R/etc/passwd")
gid=$(awk -F: '$1=="colocd"{print $3}' "$R/etc/group")
[ -n "$uid" ] && [ -n "$gid" ] || fail "sysusers.d made no user or group colocd"
want() { # path mode uid gid
  got=$(stat -c '%a %u %g' "$R$1")
  [ "$got" = "$2 $3 $4" ] || fail "$1 is $got (mode uid gid), want $2 $3 $4"
}
want /etc/colocd 750 0 "$gid"
want /etc/colocd/colocd.yaml 640 0 "$gid"
want /etc/colocd/tokens 640 0 "$gid"
want /usr/bin/colocd 755 0 0
for doc in README.md daemon.md; do
  [ -f "$R/usr/share/doc/colocd/$doc" ] || fail "the unit's Documentation= names /usr/share/doc/colocd/$doc, not installed"
done
log "installed: user colocd ($uid:$gid), /etc/colocd root:colocd 0750, colocd.yaml and tokens root:colocd 0640, the documents the unit names"

# 4. The service user reads its configuration (a static binary: chroot
# needs nothing else in the root).
if ! out=$(chroot --userspec="$uid:$gid" "$R" /usr/bin/colocd config check 2>&1); then
  echo "$out"; fail "colocd config check as the service user in the installed root"
fi
grep -q '^config /etc/colocd/colocd.yaml: valid' <<<"$out" || fail "config check did not read the default path: $out"
chgrp 0 "$R/etc/colocd"
set +e
out=$(chroot --userspec="$uid:$gid" "$R" /usr/bin/colocd config check 2>&1); rc=$?
set -e
[ "$rc" = 2 ] && grep -q "permission denied" <<<"$out" ||
  fail "an unreadable /etc/colocd: exit $rc, want 2 with permission denied: $out"
chgrp "$gid" "$R/etc/colocd"
log "the service user reads /etc/colocd/colocd.yaml; with /etc/colocd root:root it exits 2 (permission denied)"

# 5. The unit as installed: verify (ExecStart pointed at the unpacked
# binary, since /usr/bin/colocd is not installed on this host), security.
unit=$R/lib/systemd/system/colocd.service
[ -f "$unit" ] || fail "no unit at /lib/systemd/system/colocd.service"
mkdir -p "$work/verify"
sed "s|^ExecStart=/usr/bin/colocd |ExecStart=$R/usr/bin/colocd |" "$unit" >"$work/verify/colocd.service"
grep -q "^ExecStart=$R/usr/bin/colocd " "$work/verify/colocd.service" || fail "the unit has no ExecStart=/usr/bin/colocd"
out=$(systemd-analyze verify "$work/verify/colocd.service" 2>&1) && [ -z "$out" ] ||
  fail "systemd-analyze verify on the installed unit: $out"
exposure() {
  systemd-analyze security --offline=true --root="$R" colocd.service 2>&1 |
    sed -n 's/.*Overall exposure level for colocd.service: \([0-9.]*\).*/\1/p'
}
mdwe() {
  systemd-analyze security --offline=true --root="$R" colocd.service 2>&1 | grep 'MemoryDenyWriteExecute=' | cut -c1-3
}
base=$(exposure)
[ -n "$base" ] && awk -v s="$base" 'BEGIN{exit !(s <= 2.0)}' || fail "systemd-analyze security: exposure ${base:-unknown}, want <= 2.0"
[ "$(mdwe)" = "✓" ] || fail "the unit does not deny writable executable memory"
dropin=$R/etc/systemd/system/colocd.service.d
mkdir -p "$dropin"
cp "$R/usr/share/colocd/systemd/submit-command-jvm.conf" "$dropin/"
jvm=$(exposure)
[ "$(mdwe)" = "✗" ] || fail "with the JVM drop-in, MemoryDenyWriteExecute= is still on"
awk -v s="$jvm" 'BEGIN{exit !(s <= 2.0)}' || fail "with the JVM drop-in the exposure is $jvm, want <= 2.0"
# Why the drop-in: the kernel's W^X for this process and its children
# (prctl PR_SET_MDWE, what MemoryDenyWriteExecute=yes enforces) stops a JVM.
set +e
out=$(python3 -c 'import ctypes, os
if ctypes.CDLL(None).prctl(65, 1, 0, 0, 0) != 0: raise SystemExit(3)
os.execvp("java", ["java", "-version"])' 2>&1); rc=$?
set -e
case $rc in
3) log "this kernel has no PR_SET_MDWE: the JVM under MemoryDenyWriteExecute= is not shown" ;;
0) fail "java -version ran under PR_SET_MDWE: the drop-in's reason no longer holds" ;;
*) grep -q "Failed to mark memory page as executable" <<<"$out" || fail "java under PR_SET_MDWE: $out" ;;
esac
java -version >/dev/null 2>&1 || fail "java -version fails without PR_SET_MDWE"
log "systemd-analyze verify: clean; security: exposure $base, $jvm with the JVM drop-in (MemoryDenyWriteExecute= off; a JVM under it: 'Failed to mark memory page as executable')"

# 6. The .rpm.
files=$(rpm -qlp "$rpmf" 2>/dev/null)
for f in /usr/bin/colocd /usr/lib/systemd/system/colocd.service /usr/lib/sysusers.d/colocd.conf \
  /usr/lib/tmpfiles.d/colocd.conf /etc/colocd/colocd.yaml /usr/share/doc/colocd/README.md; do
  grep -qx "$f" <<<"$files" || fail "the .rpm lacks $f"
done
rpm -qp --configfiles "$rpmf" 2>/dev/null | grep -qx /etc/colocd/colocd.yaml || fail "the .rpm's colocd.yaml is not a config file"
rpm -qp --scripts "$rpmf" 2>/dev/null | grep -q systemd-sysusers || fail "the .rpm's %post does not run systemd-sysusers"
log "rpm: the same files, colocd.yaml a config file, %post runs systemd-sysusers"
log "ok"
