package yarncluster

import (
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/yarnclient"
)

// Cluster adapts a YARN ResourceManager (yarnclient) to engine.Cluster,
// engine.forgetful and engine.JobPreparer.
//
// REST submission: Reserve is new-application; Submit posts the job's
// application-submission-context (job.submit, passed through) under the
// reserved id with the tags colocd-job-<id> and colocd-kind-<kind>. A second
// submission of an id the RM already has is harmless: Submit checks the id
// first when the RM refuses.
//
// Submitting as the job's user (yarn.submit_as job_user): Submit and Kill
// act as the job's user (yarnclient.As: doAs=<user> with Kerberos,
// user.name=<user> with simple auth); Reserve and every read stay
// colocd's. A refusal of the RM's proxy-user rules is a cluster.ErrRejected
// naming the user and the rules. Kill acts as the application's owner, the
// one user the RM always lets kill it (MODIFY_APP; colocd's own user would
// need to be a YARN or queue administrator).
//
// Delegation tokens (yarn.tokens) are fetched in Submit, at admission,
// never at enqueue: an RM token (Cluster Delegation Tokens API) and one
// HDFS token per namespace (WebHDFS GETDELEGATIONTOKEN), for the user the
// application is submitted as, into its am-container-spec.credentials.
//
// Command submission: Reserve mints a token ("cmd-<rm start>-<hex>", the
// start time of the active RM in ms, then 128 random bits) that becomes
// the job's app id in the store; the application carries the tag
// colocd-app-<token>-<mac>, where mac is an HMAC of the token under a key
// only colocd holds (WithTagKey: a file in data_dir), so nobody else can
// make an application carry it before colocd's does. Submit looks that tag
// up before running the command (tags first), so a command is never run
// twice for one reservation, and App, Kill and State resolve the token to
// the real application through it: the first application that carried
// the tag (a copy of a tag already seen on the RM comes later).
//
// Which job an application runs is never read from its tags: any user can
// tag an application colocd-job-<id>. The engine maps applications to jobs
// by the id it reserved (REST) or the token (cluster.App.Reservation), and
// checks their users against AppOwners.
type Cluster struct {
	c      *yarnclient.Client
	cfg    Config
	log    *slog.Logger
	now    func() time.Time // the placement and node caches only
	tagKey []byte           // WithTagKey
	params map[string]paramRule
	// paramErr is why the command's parameters could not be compiled (a
	// Config that was not validated); every job is refused with it.
	paramErr error
	mu       sync.Mutex
	real     map[string]string // command token → application id
	copies   map[string]bool   // applications with a copied command tag, logged
	pl       map[string]placementEntry
	node     nodeCache
}

// paramRule is a compiled entry of yarn.command.params.
type paramRule struct {
	index    int // in yarn.command.params
	re       *regexp.Regexp
	max      int
	required bool
	// leading: {{param.NAME}} starts an argument of the command, where a
	// value starting with '-' would be read as an option.
	leading bool
}

// Option configures a Cluster.
type Option func(*Cluster)

// WithTagKey is the key command submissions' tags are authenticated with
// (at least 32 bytes, kept secret and stable across restarts: a new key
// loses track of the applications already submitted). Command submission
// needs one.
func WithTagKey(key []byte) Option {
	return func(y *Cluster) { y.tagKey = slices.Clone(key) }
}

// MinTagKeyBytes is the shortest key WithTagKey takes.
const MinTagKeyBytes = 32

type placementEntry struct {
	at     time.Time
	nodes  []string
	counts map[string]int // node → containers
}

// placementTTL is how long an application's node list is reused.
const placementTTL = 10 * time.Second

// nodeCache is the last reading of the running nodes (see State).
type nodeCache struct {
	at    time.Time // zero: never read
	key   nodeCounts
	nodes []cluster.Node               // as reported: name, capacity, free room
	use   map[string]pipeline.Capacity // colocd's applications' allocation on each node then
}

// nodeCounts are the cluster metrics' node counts: a node that joins,
// leaves or changes state changes them.
type nodeCounts struct {
	active, lost, unhealthy, decommissioning, decommissioned, rebooted, shutdown int
}

func countsOf(m yarnclient.ClusterMetrics) nodeCounts {
	return nodeCounts{m.ActiveNodes, m.LostNodes, m.UnhealthyNodes, m.DecommissioningNodes, m.DecommissionedNodes,
		m.RebootedNodes, m.ShutdownNodes}
}

// commandTokenPrefix marks the app ids of command submissions.
const commandTokenPrefix = "cmd-"

// tagAppPrefix tags a command submission with its reservation token.
const tagAppPrefix = "colocd-app-"

// New adapts c.
func New(c *yarnclient.Client, cfg Config, log *slog.Logger, opts ...Option) *Cluster {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	y := &Cluster{c: c, cfg: cfg, log: log, now: time.Now, real: map[string]string{}, copies: map[string]bool{},
		pl: map[string]placementEntry{}, params: map[string]paramRule{}}
	for _, o := range opts {
		o(y)
	}
	for i, p := range cfg.Command.Params {
		re, err := compileParam(p)
		if err != nil {
			y.paramErr = fmt.Errorf("yarn.command.params[%d].pattern: %w", i, err)
			break
		}
		r := paramRule{index: i, re: re, max: p.maxLength(), required: p.Required}
		for _, a := range cfg.Command.Argv[min(1, len(cfg.Command.Argv)):] {
			r.leading = r.leading || strings.HasPrefix(a, yarnclient.PlaceholderParamPrefix+p.Name+"}}")
		}
		y.params[p.Name] = r
	}
	return y
}
