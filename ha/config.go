package ha

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"
)

// Defaults of Config.
const (
	DefaultRoot           = "/colocd/default"
	DefaultSessionTimeout = 10 * time.Second
	// DefaultSnapshotEvery: entries between snapshots. Group commit put
	// about 21 jobs in an entry under 32 clients (the failover study), so
	// that is about 100,000 submissions; an entry is a few KiB deflated,
	// and a new replica that replays them all instead of a snapshot joins
	// 100,000 jobs in about 5 s with 6.4 MB in ZooKeeper (BenchmarkJoin).
	DefaultSnapshotEvery = 5000
	// DefaultKeepEntries: entries kept behind a snapshot, so a replica a
	// little behind follows the log instead of installing the snapshot.
	DefaultKeepEntries = 1000
	// defaultMaxInFlight: appends in flight at once (8 measured 11–14k
	// jobs/s with batches of 64 against 3 servers on loopback).
	defaultMaxInFlight = 8
)

// How a store whose log is a Replica groups its submissions
// (queue.Options): a group waits StoreGroupWait for more once its first
// has come, and StoreInFlight groups are appended at once. Every append is
// a quorum round (about 3 ms here against 1 ms for a local fsync), so
// larger groups pay: measured with BenchmarkSubmit32 (32 clients, three
// servers on the same 2-core VM), no wait and one in flight gave 16 jobs
// an append and 4,200 jobs/s; 0.5 ms and two in flight, 32 jobs and
// 5,500 jobs/s.
const (
	StoreGroupWait = 500 * time.Microsecond
	StoreInFlight  = 2
)

// ErrConfig: a Config that cannot work (the error names the field).
var ErrConfig = errors.New("ha: invalid config")

// Config is one replica's view of the replicated colocd.
type Config struct {
	// Connect lists the ZooKeeper servers, host:port each (the cluster's
	// hadoop.zk.address).
	Connect []string
	// Root is the znode under which this colocd cluster keeps everything
	// (its chroot): one per colocd cluster sharing a ZooKeeper.
	Root string
	// SessionTimeout is the session timeout asked of ZooKeeper (the
	// servers may grant less: between 2 and 20 of their ticks). A leader
	// whose process or network stops for longer loses its leadership.
	SessionTimeout time.Duration
	// Auth, when set, authenticates the session (digest) and puts a
	// digest ACL on every znode colocd creates: only holders of these
	// credentials can read or change them.
	Auth *Auth
	// ID names this replica among the others (its host name by default).
	ID string
	// Advertise is the URL where clients and the other replicas reach this
	// replica's API: followers forward writes to the leader's.
	Advertise string
	// SnapshotEvery, KeepEntries and MaxInFlight: see their defaults.
	SnapshotEvery uint64
	KeepEntries   uint64
	MaxInFlight   int
}

// Auth is a digest identity: ZooKeeper's "digest" scheme, user:password.
type Auth struct {
	User, Password string
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.Root == "" {
		c.Root = DefaultRoot
	}
	if c.SessionTimeout == 0 {
		c.SessionTimeout = DefaultSessionTimeout
	}
	if c.SnapshotEvery == 0 {
		c.SnapshotEvery = DefaultSnapshotEvery
	}
	if c.KeepEntries == 0 {
		c.KeepEntries = DefaultKeepEntries
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = defaultMaxInFlight
	}
	return c
}

// Validate checks c, naming the first bad field.
func (c Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrConfig, field, fmt.Sprintf(format, args...))
	}
	c = c.withDefaults()
	if len(c.Connect) == 0 {
		return bad("connect", "no ZooKeeper server")
	}
	for _, s := range c.Connect {
		if _, port, ok := strings.Cut(s, ":"); !ok || port == "" || strings.ContainsAny(s, "/ ") {
			return bad("connect", "%q is not host:port (a chroot goes in root)", s)
		}
	}
	if !strings.HasPrefix(c.Root, "/") || c.Root == "/" || path.Clean(c.Root) != c.Root {
		return bad("root", "%q is not an absolute znode path below /", c.Root)
	}
	if c.SessionTimeout < time.Second || c.SessionTimeout > 5*time.Minute {
		return bad("session_timeout", "%v is outside [1s, 5m]", c.SessionTimeout)
	}
	if c.Auth != nil && (c.Auth.User == "" || c.Auth.Password == "" || strings.Contains(c.Auth.User, ":")) {
		return bad("auth", "a digest identity needs a user without ':' and a password")
	}
	if c.ID == "" || strings.ContainsAny(c.ID, "/ \t\n") || len(c.ID) > 128 {
		return bad("id", "%q is not a replica name (no '/' or space, at most 128 bytes)", c.ID)
	}
	if u, err := url.Parse(c.Advertise); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return bad("advertise_url", "%q is not an http(s) URL of this replica's API", c.Advertise)
	}
	if c.KeepEntries >= c.SnapshotEvery {
		return bad("keep_entries", "%d is not below snapshot_every %d", c.KeepEntries, c.SnapshotEvery)
	}
	if c.MaxInFlight < 1 || c.MaxInFlight > 64 {
		return bad("max_in_flight", "%d is outside [1, 64]", c.MaxInFlight)
	}
	return nil
}

// paths are the znodes under Root.
type paths struct{ root string }

func (p paths) leader() string    { return p.root + "/leader" }
func (p paths) epoch() string     { return p.root + "/epoch" }
func (p paths) cluster() string   { return p.root + "/cluster" }
func (p paths) log() string       { return p.root + "/log" }
func (p paths) blobs() string     { return p.root + "/blobs" }
func (p paths) snapshots() string { return p.root + "/snapshots" }
func (p paths) snapshot() string  { return p.root + "/snapshot" }
func (p paths) members() string   { return p.root + "/members" }

// entry is the znode of log entry i: 20 digits, so names sort by index.
func (p paths) entry(i uint64) string { return fmt.Sprintf("%s/log/%020d", p.root, i) }

func (p paths) member(id string) string { return p.root + "/members/" + id }

func (p paths) blob(i uint64) string { return fmt.Sprintf("%s/blobs/%020d", p.root, i) }

func (p paths) chunk(parent string, n int) string { return fmt.Sprintf("%s/%06d", parent, n) }

func (p paths) snapshotDir(i uint64) string { return fmt.Sprintf("%s/snapshots/%020d", p.root, i) }
