// Package kdctest runs a real MIT Kerberos KDC (Debian's krb5-kdc 1.20)
// for tests.
//
// Start creates a realm in t.TempDir(): a kdc.conf and a krb5.conf written
// there (KRB5_KDC_PROFILE and KRB5_CONFIG point the child processes at
// them, never at /etc), the database made with `kdb5_util create -s`, and
// `krb5kdc -n` listening on one free 127.0.0.1 port for both UDP and TCP.
// It returns once that port accepts a connection (a bounded wait that fails
// at once if the KDC exits) and registers a cleanup that kills the KDC's
// process group and checks that it exited. Principals are added with
// `kadmin.local addprinc -randkey` (AddPrincipal) and exported without
// changing their keys with `ktadd -norandkey` (Keytab); Kadmin runs any
// other kadmin.local query (cpw -randkey to rotate a key, delprinc).
//
// Options set the realm's maximum ticket life (MaxLife, to test renewal)
// and shift the KDC's clock (ClockOffset, through Debian's faketime, to
// test clock skew against a real KDC). Principals require
// pre-authentication, as on production KDCs (default_principal_flags =
// +preauth), unless added with NoPreauth.
//
// The binaries (krb5kdc, kdb5_util, kadmin.local; faketime for ClockOffset)
// are found on PATH or in /usr/sbin. A missing one skips the test, unless
// COLOCD_REQUIRE_TOOLS=1, which fails it; scripts/install-tools.sh (make
// test) installs them.
//
// This package owns only test scaffolding. It must not be imported by
// production code, must not bind anything but 127.0.0.1, must not read or
// write the machine's Kerberos configuration, and must not leave a process
// running after the test that started it.
package kdctest
