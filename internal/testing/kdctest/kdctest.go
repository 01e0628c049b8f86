package kdctest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colocd/colocd/internal/testing/childproc"
	"github.com/colocd/colocd/internal/testing/testlogs"
)

// defaultRealm is the realm Start creates unless realm says otherwise.
const defaultRealm = "COLOCD.TEST"

// Bounds on the KDC's lifecycle. krb5kdc listens within milliseconds of its
// start (kdb5_util create takes about 20 ms); the margins cover a loaded
// 2-core CI machine running -race tests.
const (
	readyTimeout = 10 * time.Second
	stopTimeout  = 5 * time.Second // SIGTERM → SIGKILL, and SIGKILL → reaped
	pollEvery    = 10 * time.Millisecond
	dialTimeout  = 500 * time.Millisecond
	startTries   = 3 // a free port can be taken between the probe and the bind
	tailBytes    = 4 << 10

	masterPassword = "kdctest-master-key"
)

// Option configures Start.
type Option func(*options)

type options struct {
	realm       string
	maxLife     time.Duration
	clockOffset time.Duration
}

// realm names the realm (upper case by convention).
func realm(r string) Option { return func(o *options) { o.realm = r } }

// MaxLife sets the realm's max_life, which bounds every ticket's lifetime,
// the TGT's included (kdb5_util gives krbtgt this max life). Default 10h.
func MaxLife(d time.Duration) Option { return func(o *options) { o.maxLife = d } }

// ClockOffset runs the KDC with its clock shifted by d (libfaketime,
// preloaded into krb5kdc): a real KDC whose time disagrees with the
// client's. The test is skipped (or failed, with COLOCD_REQUIRE_TOOLS=1)
// when libfaketime is not installed.
func ClockOffset(d time.Duration) Option { return func(o *options) { o.clockOffset = d } }

// KDC is a running krb5kdc for one realm, with its database, in a
// temporary directory.
type KDC struct {
	realm    string
	dir      string
	addr     string // 127.0.0.1:port, UDP and TCP
	krb5Conf string
	kdcConf  string
	env      []string // the test's environment + KRB5_CONFIG, KRB5_KDC_PROFILE
	bins     map[string]string
	opts     options
	proc     *childproc.Proc
	nkeytabs int
	mu       sync.Mutex
}

// Start creates the realm and runs krb5kdc until the test ends.
func Start(t testing.TB, opts ...Option) *KDC {
	t.Helper()
	o := options{realm: defaultRealm, maxLife: 10 * time.Hour}
	for _, opt := range opts {
		opt(&o)
	}
	k := &KDC{realm: o.realm, dir: t.TempDir(), opts: o, bins: map[string]string{}}
	for _, name := range []string{"krb5kdc", "kdb5_util", "kadmin.local"} {
		k.bins[name] = Tool(t, name)
	}
	var preload []string
	if o.clockOffset != 0 {
		preload = append(preload, "LD_PRELOAD="+libfaketime(t), "FAKETIME="+fakeOffset(o.clockOffset),
			"DONT_FAKE_MONOTONIC=1")
	}
	k.krb5Conf = filepath.Join(k.dir, "krb5.conf")
	k.kdcConf = filepath.Join(k.dir, "kdc.conf")
	k.env = append(os.Environ(), "KRB5_CONFIG="+k.krb5Conf, "KRB5_KDC_PROFILE="+k.kdcConf)
	var lastErr error
	for try := 0; try < startTries; try++ {
		addr, err := freeAddr()
		if err != nil {
			t.Fatalf("kdctest: %v", err)
		}
		k.addr = addr
		if err := k.writeConfigs(); err != nil {
			t.Fatalf("kdctest: %v", err)
		}
		if try == 0 {
			if _, err := k.run("kdb5_util", "create", "-s", "-P", masterPassword, "-r", k.realm); err != nil {
				t.Fatalf("kdctest: %v", err)
			}
		}
		p, err := childproc.Start("krb5kdc", k.bins["krb5kdc"], []string{"-n", "-r", k.realm},
			childproc.Options{Dir: k.dir, Env: append(k.env, preload...), LogPath: filepath.Join(k.dir, "krb5kdc.out")})
		if err == nil {
			err = waitReady(p, k.addr)
		}
		if err == nil {
			k.proc = p
			t.Cleanup(func() { k.cleanup(t) })
			return k
		}
		lastErr = fmt.Errorf("%w\n%s", err, k.LogTail())
		if p != nil {
			_ = p.Stop(stopTimeout)
		}
	}
	t.Fatalf("kdctest: starting krb5kdc failed %d times: %v", startTries, lastErr)
	return nil
}

// Realm is the KDC's realm.
func (k *KDC) Realm() string { return k.realm }

// Addr is where the KDC listens, "127.0.0.1:port", for UDP and TCP.
func (k *KDC) Addr() string { return k.addr }

// Krb5Conf is the path of a krb5.conf for clients of this KDC: its realm
// as default_realm, this KDC as its only KDC, no DNS lookups.
func (k *KDC) Krb5Conf() string { return k.krb5Conf }

// Dir is the KDC's directory (its configuration, database, logs and the
// keytabs Keytab writes).
func (k *KDC) Dir() string { return k.dir }

// Principal qualifies name with the realm unless it has one.
func (k *KDC) Principal(name string) string {
	if strings.Contains(name, "@") {
		return name
	}
	return name + "@" + k.realm
}

// principalOption changes how AddPrincipal creates a principal.
type principalOption string

// NoPreauth creates the principal without REQUIRES_PRE_AUTH: the KDC then
// answers an AS-REQ without checking the client's timestamp.
const NoPreauth principalOption = "-requires_preauth"

// AddPrincipal creates name (qualified with the realm unless it has one)
// with a random key and returns its full name.
func (k *KDC) AddPrincipal(t testing.TB, name string, opts ...principalOption) string {
	t.Helper()
	p := k.Principal(name)
	q := "addprinc -randkey"
	for _, o := range opts {
		q += " " + string(o)
	}
	k.Kadmin(t, q+" "+p)
	return p
}

// Keytab exports the current keys of the principals (qualified with the
// realm unless they have one) into a new keytab file, without changing
// them (ktadd -norandkey), and returns its path.
func (k *KDC) Keytab(t testing.TB, principals ...string) string {
	t.Helper()
	k.mu.Lock()
	k.nkeytabs++
	path := filepath.Join(k.dir, fmt.Sprintf("%d.keytab", k.nkeytabs))
	k.mu.Unlock()
	for _, p := range principals {
		k.Kadmin(t, fmt.Sprintf("ktadd -k %s -norandkey %s", path, k.Principal(p)))
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Fatalf("kdctest: keytab %s for %v was not written (%v)", path, principals, err)
	}
	return path
}

// Kadmin runs one kadmin.local query against the realm's database and
// returns its output. kadmin.local exits 0 even when a query fails, so
// any message on stderr other than its notices fails the test.
func (k *KDC) Kadmin(t testing.TB, query string) string {
	t.Helper()
	out, err := k.run("kadmin.local", "-r", k.realm, "-q", query)
	if err != nil {
		t.Fatalf("kdctest: %v", err)
	}
	return out
}

// ASIssued counts the TGTs the KDC issued to principal (qualified with the
// realm unless it has one), from its log: what a client's login or
// renewal cost the KDC.
func (k *KDC) ASIssued(t testing.TB, principal string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(k.dir, "kdc.log"))
	if err != nil {
		t.Fatalf("kdctest: read the KDC log: %v", err)
	}
	want := ": ISSUE: "
	who := " " + k.Principal(principal) + " for krbtgt/"
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "AS_REQ") && strings.Contains(line, want) && strings.Contains(line, who) {
			n++
		}
	}
	return n
}

// Stop ends the KDC now (its clients then find it unreachable); the
// cleanup does it otherwise. It is idempotent.
func (k *KDC) Stop(t testing.TB) {
	t.Helper()
	if err := k.proc.Stop(stopTimeout); err != nil {
		t.Errorf("kdctest: %v", err)
	}
}

// LogTail is the end of the KDC's log and output, for failure messages.
func (k *KDC) LogTail() string { return testlogs.Tail(k.log(), tailBytes) }

// log is the KDC's output and log, one after the other.
func (k *KDC) log() []byte {
	var b []byte
	for _, f := range []string{"krb5kdc.out", "kdc.log"} {
		if c, err := os.ReadFile(filepath.Join(k.dir, f)); err == nil {
			b = append(b, c...)
		}
	}
	return b
}

func (k *KDC) cleanup(t testing.TB) {
	if err := k.proc.Stop(stopTimeout); err != nil {
		t.Errorf("kdctest: %v", err)
	}
	if t.Failed() {
		testlogs.Log(t, "krb5kdc", k.log())
	}
}

// writeConfigs writes kdc.conf (the KDC's profile: database, stash and
// logs in dir, listening on addr only) and krb5.conf (for kadmin.local and
// for clients).
func (k *KDC) writeConfigs() error {
	secs := int64(k.opts.maxLife / time.Second)
	kdc := fmt.Sprintf(`[kdcdefaults]
 kdc_listen = %[2]s
 kdc_tcp_listen = %[2]s

[realms]
 %[1]s = {
  database_name = %[3]s/principal
  key_stash_file = %[3]s/stash
  acl_file = %[3]s/kadm5.acl
  max_life = %[4]ds
  max_renewable_life = %[5]ds
  default_principal_flags = +preauth
  supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
 }

[logging]
 kdc = FILE:%[3]s/kdc.log
 admin_server = FILE:%[3]s/kadmin.log
 default = FILE:%[3]s/krb5.log
`, k.realm, k.addr, k.dir, secs, 7*24*3600)
	krb5 := fmt.Sprintf(`[libdefaults]
 default_realm = %[1]s
 dns_lookup_kdc = false
 dns_lookup_realm = false
 rdns = false

[realms]
 %[1]s = {
  kdc = %[2]s
 }
`, k.realm, k.addr)
	if err := os.WriteFile(k.kdcConf, []byte(kdc), 0o600); err != nil {
		return err
	}
	return os.WriteFile(k.krb5Conf, []byte(krb5), 0o600)
}

// run runs one of the admin tools with the realm's configuration.
func (k *KDC) run(name string, args ...string) (string, error) {
	cmd := exec.Command(k.bins[name], args...)
	cmd.Env, cmd.Dir = k.env, k.dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		err = adminError(stderr.String())
	}
	if err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// adminError finds a failure in what kdb5_util or kadmin.local wrote to
// stderr, past their notices.
func adminError(stderr string) error {
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "",
			strings.HasPrefix(line, "No policy specified for"),
			strings.HasPrefix(line, "Authenticating as principal"),
			strings.HasPrefix(line, "Initializing database"),
			strings.HasPrefix(line, "master key name"):
		default:
			return errors.New(line)
		}
	}
	return nil
}

// Tool returns the path of a Kerberos tool (PATH, then /usr/sbin, where
// Debian puts the KDC's). When it is missing the test is skipped, or
// failed if COLOCD_REQUIRE_TOOLS=1.
func Tool(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	p := filepath.Join("/usr/sbin", name)
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
		return p
	}
	missing(t, fmt.Sprintf("%s not found on PATH or in /usr/sbin (Debian packages krb5-kdc, krb5-admin-server, krb5-user; run scripts/install-tools.sh)", name))
	return ""
}

// libfaketime finds Debian's libfaketime.so.1.
func libfaketime(t testing.TB) string {
	t.Helper()
	for _, pattern := range []string{"/usr/lib/*/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1", "/usr/local/lib/faketime/libfaketime.so.1"} {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return m[0]
		}
	}
	missing(t, "libfaketime.so.1 not found (Debian package faketime; run scripts/install-tools.sh)")
	return ""
}

func missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("COLOCD_REQUIRE_TOOLS") == "1" {
		t.Fatal("kdctest: " + msg)
	}
	t.Skip("kdctest: " + msg)
}

// fakeOffset is libfaketime's FAKETIME for a relative offset: "+3600" or
// "-90" (seconds).
func fakeOffset(d time.Duration) string {
	s := strconv.FormatInt(int64(d/time.Second), 10)
	if d > 0 {
		s = "+" + s
	}
	return s
}

// freeAddr finds a loopback port free for both TCP and UDP.
func freeAddr() (string, error) {
	for range 10 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("find a free port: %w", err)
		}
		addr := l.Addr().String()
		pc, err := net.ListenPacket("udp", addr)
		_ = l.Close()
		if err == nil {
			_ = pc.Close()
			return addr, nil
		}
	}
	return "", errors.New("find a free port: no port free for both TCP and UDP in 10 tries")
}
