#!/usr/bin/env bash
# Installs what the integration tests need, once, into a cache directory that is
# not part of the repository (default $HOME/.cache/colocd/tools, override with
# COLOCD_TOOLS). Safe to run repeatedly: each tool is built only when missing.
#
#   influxd   InfluxDB 1.8.10 (Flux enabled by the tests' config)
#   telegraf  Telegraf v1.37.2, custom build with the inputs colocd reads
#   staticcheck  honnef.co/go/tools 2026.2.2 (make vet runs it on both modules)
#   chromium  Debian's chromium, for the status-page test
#   prometheus, promtool, node_exporter  Debian's prometheus 2.42 and
#             prometheus-node-exporter 1.5, linked into $TOOLS/bin (their
#             services are not started)
#   systemd-analyze  Debian's systemd, for make verify-unit (systemd-analyze
#             verify configs/colocd.service); only installed, not started.
#             When it cannot be installed, make verify-unit is skipped and says so.
#   krb5kdc, kdb5_util, kadmin.local, kinit  Debian's MIT Kerberos 1.20
#             (krb5-kdc, krb5-admin-server, krb5-user), for the Kerberos/SPNEGO
#             tests (internal/kdctest starts its own KDC in a temporary
#             directory; the packages' services are not started)
#   faketime  Debian's libfaketime, so a test can run that KDC with its
#             clock an hour ahead (the clock-skew errors)
#   python3-requests, python3-requests-kerberos  Debian's, for the Python
#             client example's test (examples/python/colocd_submit.py
#             against the real daemon and KDC; run by /usr/bin/python3)
#   nfpm     github.com/goreleaser/nfpm v2.45.2, for make package (the .deb
#             and .rpm)
#   lintian, rpm, procps  Debian's, for make check-package (lintian on the
#             .deb, rpm -qlp on the .rpm; procps's /bin/kill is the unit's
#             ExecReload=, which systemd-analyze verify checks)
#   zookeeper Debian's zookeeper 3.8 (a JVM: default-jre comes with it),
#             for the high-availability tests (internal/testing/zktest
#             starts its own servers; the package's service is not started)
set -euo pipefail

TOOLS=${COLOCD_TOOLS:-$HOME/.cache/colocd/tools}
mkdir -p "$TOOLS/bin"
export GOBIN="$TOOLS/bin"
export GOFLAGS=-mod=mod

log() { printf 'install-tools: %s\n' "$*" >&2; }

# apt_install_no_start installs Debian packages (as root) without starting
# their services: a policy-rc.d that refuses every start, removed after.
apt_install_no_start() {
  local cleanup_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    cleanup_policy=1
  fi
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
  if [ "$cleanup_policy" = 1 ]; then rm -f /usr/sbin/policy-rc.d; fi
}

if [ ! -x "$GOBIN/influxd" ]; then
  log "building influxd 1.8.10 (a few minutes, once)"
  (cd "$TOOLS" && go install github.com/influxdata/influxdb/cmd/influxd@v1.8.10)
fi

if [ ! -x "$GOBIN/telegraf" ]; then
  log "building telegraf v1.37.2 custom (a few minutes, once)"
  (cd "$TOOLS" && go install \
    -tags custom,inputs.cpu,inputs.diskio,inputs.net,inputs.mem,inputs.execd,outputs.influxdb_v2 \
    github.com/influxdata/telegraf/cmd/telegraf@v1.37.2)
fi

if [ ! -x "$GOBIN/staticcheck" ]; then
  log "building staticcheck 2026.2.2 (v0.8.2)"
  (cd "$TOOLS" && go install honnef.co/go/tools/cmd/staticcheck@v0.8.2)
fi

if [ ! -x "$GOBIN/nfpm" ]; then
  log "building nfpm v2.45.2"
  (cd "$TOOLS" && go install github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2)
fi

if ! command -v lintian >/dev/null 2>&1 || ! command -v rpm >/dev/null 2>&1 || [ ! -x /bin/kill ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing Debian lintian, rpm and procps"
    apt_install_no_start lintian rpm procps
  else
    log "lintian, rpm or /bin/kill (procps) is missing and cannot be installed (not root or no apt-get)"
    exit 1
  fi
fi

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing Debian chromium"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    log "chromium is missing and cannot be installed (not root or no apt-get)"
    exit 1
  fi
fi

if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1 ||
  ! command -v prometheus-node-exporter >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing Debian prometheus and prometheus-node-exporter"
    apt_install_no_start prometheus prometheus-node-exporter
  else
    log "prometheus or node_exporter is missing and cannot be installed (not root or no apt-get)"
    exit 1
  fi
fi
ln -sf "$(command -v prometheus)" "$GOBIN/prometheus"
ln -sf "$(command -v promtool)" "$GOBIN/promtool"
ln -sf "$(command -v prometheus-node-exporter)" "$GOBIN/node_exporter"

# Kerberos: the KDC binaries live in /usr/sbin, which a non-login shell's PATH
# may lack, so look there too.
have_sbin() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }
if ! have_sbin krb5kdc || ! have_sbin kdb5_util || ! have_sbin kadmin.local ||
  ! command -v kinit >/dev/null 2>&1 || ! command -v faketime >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing Debian krb5-kdc, krb5-admin-server, krb5-user (MIT Kerberos 1.20) and faketime"
    # Noninteractive debconf leaves the default realm empty.
    apt_install_no_start krb5-kdc krb5-admin-server krb5-user faketime
  else
    log "the MIT Kerberos KDC (krb5kdc, kdb5_util, kadmin.local) or faketime is missing and cannot be installed (not root or no apt-get)"
    exit 1
  fi
fi

if ! /usr/bin/python3 -c 'import requests, requests_kerberos' >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing Debian python3-requests and python3-requests-kerberos"
    apt_install_no_start python3-requests python3-requests-kerberos
  else
    log "python3-requests or python3-requests-kerberos is missing and cannot be installed (not root or no apt-get)"
    exit 1
  fi
fi

if [ ! -f "${COLOCD_ZOOKEEPER_JAR:-/usr/share/java/zookeeper.jar}" ] || ! command -v java >/dev/null 2>&1 ||
  [ ! -f /usr/share/java/slf4j-log4j12.jar ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing Debian zookeeper 3.8 (and a JRE)"
    apt_install_no_start zookeeper libslf4j-java liblog4j1.2-java
  else
    log "ZooKeeper (/usr/share/java/zookeeper.jar, Debian package zookeeper) or java is missing and cannot be installed (not root or no apt-get)"
    exit 1
  fi
fi

if ! command -v systemd-analyze >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing Debian systemd (for systemd-analyze)"
    if ! { apt-get update -qq >/dev/null &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd >/dev/null; }; then
      log "systemd could not be installed: make verify-unit will skip the unit check"
    fi
  else
    log "systemd-analyze is missing and cannot be installed (not root or no apt-get): make verify-unit will skip the unit check"
  fi
fi

log "tools ready in $GOBIN ($(command -v chromium))"
