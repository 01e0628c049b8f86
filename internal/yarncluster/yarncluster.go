package yarncluster

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/yarnclient"
)

// Cluster adapts a YARN ResourceManager (yarnclient) to engine.Cluster,
// engine.Forgetful and engine.JobPreparer.
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
	nodes []cluster.Node            // as reported: name, capacity, free room
	use   map[string]queue.Capacity // colocd's applications' allocation on each node then
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

// refused is a job the configuration does not allow (HTTP 422).
func refusedField(field, format string, args ...any) error {
	return &queue.FieldError{Field: field, Reason: fmt.Sprintf(format, args...), Refused: true}
}

// Prepare checks what YARN needs: resources, and a submit spec for REST
// (an application-submission-context without application-id, with an
// am-container-spec, without colocd's tags, in the job's queue: its queue
// is the job's when the job names none) or, for command submission,
// {"params": {...}} with the parameters yarn.command.params declares
// (commandParams).
func (y *Cluster) Prepare(j *queue.Job) error {
	switch {
	case y.cfg.SubmitAs == SubmitAsJobUser && j.User == "":
		return &queue.FieldError{Field: "user", Reason: "required: yarn.submit_as is job_user, so the application runs as the job's user"}
	case j.Resources.Containers < 1:
		return &queue.FieldError{Field: "resources.containers", Reason: "must be >= 1 on the yarn backend"}
	case j.Resources.MemoryMB < 1:
		return &queue.FieldError{Field: "resources.memory_mb", Reason: "must be >= 1 on the yarn backend"}
	case j.Resources.VCores < 1:
		return &queue.FieldError{Field: "resources.vcores", Reason: "must be >= 1 on the yarn backend"}
	}
	if y.cfg.Submit == SubmitCommand {
		if j.Queue != "" && !y.argvHas(yarnclient.PlaceholderQueue) {
			return refusedField("queue", "%q cannot be honoured: yarn.command.argv does not pass {{queue}} to the command, "+
				"so the application would run in the queue the command picks while colocd accounted the job to %q; leave queue out", j.Queue, j.Queue)
		}
		_, err := y.commandParams(*j)
		return err
	}
	if len(j.Submit) == 0 {
		return &queue.FieldError{Field: "submit", Reason: "required on the yarn backend: an application-submission-context"}
	}
	var sc yarnclient.SubmissionContext
	if err := json.Unmarshal(j.Submit, &sc); err != nil {
		return &queue.FieldError{Field: "submit", Reason: fmt.Sprintf("not an application-submission-context: %v", err)}
	}
	if sc.ApplicationID != "" {
		return &queue.FieldError{Field: "submit.application-id", Reason: "must be left out: colocd reserves the id"}
	}
	if len(sc.AMContainerSpec) == 0 && !sc.UnmanagedAM {
		return &queue.FieldError{Field: "submit.am-container-spec", Reason: "required"}
	}
	if j.Queue == "" {
		j.Queue = sc.Queue // one queue per job: the one it runs in is the one it is accounted to
	}
	return checkContext(*j, sc)
}

// checkContext refuses a REST submission's context that would make the
// application look like another of colocd's (colocd's tags), or run it in
// a queue other than the job's: fairness and the service curves account a
// job to its queue, and YARN runs and charges it in the context's.
func checkContext(j queue.Job, sc yarnclient.SubmissionContext) error {
	for i, t := range sc.ApplicationTags {
		if yarnclient.IsReservedTag(t) {
			return refusedField(fmt.Sprintf("submit.application-tags[%d]", i), "%q: tags starting with %q (in any case) are colocd's own, "+
				"with which it marks the applications it submits", t, yarnclient.ReservedTagPrefix)
		}
	}
	if sc.Queue != "" && sc.Queue != j.Queue {
		return refusedField("submit.queue", "%q differs from the job's queue %q: a job runs in one queue, the one colocd accounts it to; "+
			"set queue (submit.queue is filled from it), or both to the same queue", sc.Queue, j.Queue)
	}
	return nil
}

// argvHas reports whether an argument of yarn.command.argv holds
// placeholder p.
func (y *Cluster) argvHas(p string) bool {
	return slices.ContainsFunc(y.cfg.Command.Argv, func(a string) bool { return strings.Contains(a, p) })
}

// commandParams reads a command submission's job.submit, {"params":
// {NAME: "value", ...}}, and checks every value against its entry of
// yarn.command.params: declared, a string of at most max_length bytes
// without control characters, matching the whole pattern, not starting
// with '-' where {{param.NAME}} starts an argument; every required one
// given. Anything else a submitter might want to set (arguments, the
// environment, the working directory) is the operator's, and refused
// naming the field. Errors are *queue.FieldError (Refused but for JSON
// that is not an object).
func (y *Cluster) commandParams(j queue.Job) (map[string]string, error) {
	if y.paramErr != nil {
		return nil, refusedField("submit.params", "%v", y.paramErr)
	}
	var raw map[string]json.RawMessage
	if len(j.Submit) > 0 {
		if err := json.Unmarshal(j.Submit, &raw); err != nil {
			return nil, &queue.FieldError{Field: "submit", Reason: fmt.Sprintf(`command submission takes {"params": {"NAME": "value", ...}}: %v`, err)}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		switch k {
		case "params":
		case "args":
			return nil, refusedField("submit.args", "a job cannot add arguments to the command: yarn.command.argv is the operator's; "+
				"give the values it takes in submit.params (%s)", y.declared())
		case "env":
			return nil, refusedField("submit.env", "a job cannot set the command's environment (BASH_ENV, LD_PRELOAD or HADOOP_USER_NAME "+
				"would run code, or act as another user, on colocd's host): yarn.command.env is the operator's")
		case "dir":
			return nil, refusedField("submit.dir", "a job cannot choose the command's working directory: yarn.command.dir is the operator's")
		default:
			return nil, refusedField("submit."+k, `unknown field: command submission takes {"params": {"NAME": "value", ...}} (%s)`, y.declared())
		}
	}
	var given map[string]json.RawMessage
	if p, ok := raw["params"]; ok {
		if err := json.Unmarshal(p, &given); err != nil {
			return nil, &queue.FieldError{Field: "submit.params", Reason: fmt.Sprintf(`must be an object {"NAME": "value", ...}: %v`, err)}
		}
	}
	out := make(map[string]string, len(given))
	for _, name := range slices.Sorted(maps.Keys(given)) {
		field := "submit.params[" + name + "]"
		r, ok := y.params[name]
		if !ok {
			return nil, refusedField(field, "no such parameter: %s", y.declared())
		}
		var v string
		if err := json.Unmarshal(given[name], &v); err != nil {
			return nil, refusedField(field, "must be a string")
		}
		if err := r.check(name, v); err != nil {
			return nil, refusedField(field, "%v", err)
		}
		out[name] = v
	}
	for _, p := range y.cfg.Command.Params {
		if _, ok := out[p.Name]; !ok && p.Required {
			return nil, refusedField("submit.params["+p.Name+"]", "required (yarn.command.params[%d].required)", y.params[p.Name].index)
		}
	}
	return out, nil
}

// check checks value v of parameter name against its rule.
func (r paramRule) check(name, v string) error {
	key := fmt.Sprintf("yarn.command.params[%d]", r.index)
	switch {
	case len(v) > r.max:
		return fmt.Errorf("is %d bytes, more than %s.max_length %d", len(v), key, r.max)
	case !utf8.ValidString(v) || strings.ContainsFunc(v, unicode.IsControl):
		return errors.New("has a control character or invalid UTF-8")
	case r.leading && strings.HasPrefix(v, "-"):
		return fmt.Errorf("%q starts with '-', and {{param.%s}} starts an argument of the command, which would read it as an option", v, name)
	case !r.re.MatchString(v):
		return fmt.Errorf("%q does not match %s.pattern %s (the whole value must match)", v, key, r.re.String())
	}
	return nil
}

// declared lists the declared parameters, for messages.
func (y *Cluster) declared() string {
	if len(y.cfg.Command.Params) == 0 {
		return "yarn.command.params declares none"
	}
	names := make([]string, len(y.cfg.Command.Params))
	for i, p := range y.cfg.Command.Params {
		names[i] = p.Name
	}
	return "yarn.command.params declares " + strings.Join(names, ", ")
}

// AppOwners is the user an application of j must belong to (engine.AppOwners):
// with REST submission, the one Submit submits it as (the job's user with
// yarn.submit_as job_user, else colocd's: yarn.user, or the Kerberos
// principal's short name); none when that is unknown (simple auth without
// yarn.user: the RM names an anonymous submitter by its static user). The
// RM takes a submission under an id it has already seen as a repeat and
// ignores it, and any user can submit under an id another reserved: the
// user tells colocd's application from one that took its id. A command
// submission is found by its authenticated tag, and runs as whoever the
// operator's command submits as: none.
func (y *Cluster) AppOwners(j queue.Job) []string {
	if y.cfg.Submit == SubmitCommand {
		return nil
	}
	as, err := y.submitUser(j)
	if err != nil {
		return nil
	}
	if as == "" {
		as = y.daemonUser()
	}
	if as == "" {
		return nil
	}
	return []string{as}
}

// State reads the cluster: on every call the cluster metrics (capacity
// and free room in all, exact) and the running applications, colocd's and
// other tenants' (GET /ws/v1/cluster/apps?states=RUNNING, resourceRequests
// deselected); where colocd's applications run (their tags say which are
// colocd's), from yarnclient.Placements for those whose placement is older
// than placementTTL, all in one call; and the running nodes only when
// yarn.nodes_refresh has passed since they were last read, or the metrics'
// node counts changed (a node joined, left or changed state).
//
// Between two readings of the nodes, a node's free room is what it
// reported at the reading, plus the allocation colocd's applications held
// on it then, minus the allocation they hold on it now; an application's
// allocation (allocatedMB, allocatedVCores) is split over its nodes in
// proportion to its containers on each. Other tenants' applications are
// not placed per node (only colocd's placements are asked for), so their
// changes reach a node's free room at the next reading; they reach the
// cluster's free room at once, through the metrics.
func (y *Cluster) State(ctx context.Context) (cluster.State, error) {
	var st cluster.State
	m, err := y.c.ClusterMetrics(ctx)
	if err != nil {
		return st, fmt.Errorf("cluster metrics: %w", err)
	}
	st.Capacity = queue.Capacity{MemoryMB: m.TotalMB, VCores: m.TotalVirtualCores}
	st.Free = queue.Capacity{MemoryMB: m.AvailableMB, VCores: m.AvailableVirtualCores}
	apps, err := y.c.Apps(ctx, yarnclient.AppsFilter{States: []string{"RUNNING"}})
	if err != nil {
		return st, fmt.Errorf("running applications: %w", err)
	}
	var ours []string
	for _, a := range apps {
		as := cluster.App{ID: a.ID, User: a.User, Queue: a.Queue,
			Alloc: queue.Capacity{MemoryMB: a.AllocatedMB, VCores: a.AllocatedVCores}}
		if a.StartedTime > 0 {
			as.Starts = time.UnixMilli(a.StartedTime)
		}
		// The tags only choose whose placement to read: the engine decides
		// which job, if any, an application runs (cluster.App.JobID).
		if jobID, _ := yarnclient.ParseJobTags(a.Tags()); jobID != "" {
			ours = append(ours, a.ID)
		}
		as.Reservation = y.reservation(ctx, a)
		st.Apps = append(st.Apps, as)
	}
	pl := y.placements(ctx, ours)
	use := map[string]queue.Capacity{} // colocd's allocation per node, now
	for i := range st.Apps {
		a := &st.Apps[i]
		e, ok := pl[a.ID]
		if !ok {
			continue
		}
		a.Nodes, a.Placement = e.nodes, e.counts
		addUse(use, a.Alloc, e.counts)
	}
	nc, err := y.nodes(ctx, m, use)
	if err != nil {
		return st, err
	}
	idx := make(map[string]int, len(nc.nodes))
	st.Nodes = make([]cluster.Node, len(nc.nodes))
	for i, n := range nc.nodes {
		was, now := nc.use[n.Name], use[n.Name]
		n.Free.MemoryMB = min(max(n.Free.MemoryMB+was.MemoryMB-now.MemoryMB, 0), n.Capacity.MemoryMB)
		n.Free.VCores = min(max(n.Free.VCores+was.VCores-now.VCores, 0), n.Capacity.VCores)
		st.Nodes[i] = n
		idx[n.Name] = i
	}
	for _, a := range st.Apps {
		for _, n := range a.Nodes {
			if i, ok := idx[n]; ok {
				st.Nodes[i].Apps = append(st.Nodes[i].Apps, a.ID)
			}
		}
	}
	return st, nil
}

// addUse adds an application's allocation alloc to use, split over its
// nodes in proportion to its containers on each.
func addUse(use map[string]queue.Capacity, alloc queue.Capacity, counts map[string]int) {
	total := 0
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return
	}
	for n, c := range counts {
		u := use[n]
		u.MemoryMB += alloc.MemoryMB * int64(c) / int64(total)
		u.VCores += alloc.VCores * int64(c) / int64(total)
		use[n] = u
	}
}

// nodes returns the last reading of the running nodes, reading them again
// first when yarn.nodes_refresh has passed since, or the node counts of m
// differ from the reading's; use is colocd's allocation per node now,
// kept with a new reading.
func (y *Cluster) nodes(ctx context.Context, m yarnclient.ClusterMetrics, use map[string]queue.Capacity) (nodeCache, error) {
	now := y.now()
	y.mu.Lock()
	nc := y.node
	y.mu.Unlock()
	if !nc.at.IsZero() && now.Sub(nc.at) < y.cfg.NodesRefresh && nc.key == countsOf(m) {
		return nc, nil
	}
	nodes, err := y.c.Nodes(ctx, "RUNNING")
	if err != nil {
		return nodeCache{}, fmt.Errorf("nodes: %w", err)
	}
	nc = nodeCache{at: now, key: countsOf(m), nodes: make([]cluster.Node, 0, len(nodes)), use: use}
	for _, n := range nodes {
		nc.nodes = append(nc.nodes, cluster.Node{Name: yarnclient.NodeHost(n.ID),
			Capacity: queue.Capacity{MemoryMB: n.UsedMemoryMB + n.AvailMemoryMB, VCores: n.UsedVirtualCores + n.AvailableVirtualCores},
			Free:     queue.Capacity{MemoryMB: n.AvailMemoryMB, VCores: n.AvailableVirtualCores}})
	}
	y.mu.Lock()
	y.node = nc
	y.mu.Unlock()
	return nc, nil
}

// placements returns where each of colocd's running applications ids
// runs: the cached placement when it is younger than placementTTL; the
// others are asked for in one yarnclient.Placements call (on a Hadoop 2
// RM, one sweep of the NodeManagers for all of them). When that call
// fails, an application keeps its last placement, if it has one.
// Entries of applications no longer running are dropped.
func (y *Cluster) placements(ctx context.Context, ids []string) map[string]placementEntry {
	now := y.now()
	var due []string
	y.mu.Lock()
	for _, id := range ids {
		if e, ok := y.pl[id]; !ok || now.Sub(e.at) >= placementTTL {
			due = append(due, id)
		}
	}
	y.mu.Unlock()
	var got map[string]map[string]int
	if len(due) > 0 {
		var err error
		if got, err = y.c.Placements(ctx, due); err != nil {
			y.log.Warn("placement unavailable", "apps", len(due), "err", err)
		}
	}
	y.mu.Lock()
	defer y.mu.Unlock()
	for id, p := range got {
		y.pl[id] = newPlacement(now, p)
	}
	out := make(map[string]placementEntry, len(ids))
	for _, id := range ids {
		if e, ok := y.pl[id]; ok {
			out[id] = e
		}
	}
	for id := range y.pl {
		if _, ok := out[id]; !ok {
			delete(y.pl, id)
		}
	}
	return out
}

func newPlacement(at time.Time, p map[string]int) placementEntry {
	e := placementEntry{at: at, nodes: make([]string, 0, len(p)), counts: make(map[string]int, len(p))}
	for n, c := range p {
		if c > 0 {
			e.nodes = append(e.nodes, n)
			e.counts[n] = c
		}
	}
	slices.Sort(e.nodes)
	return e
}

// reservation is the command token of application a (cluster.App.Reservation):
// the token of its authenticated colocd-app tag, when a is the
// application that token resolves to (the first to carry the tag); "" for
// any other application.
func (y *Cluster) reservation(ctx context.Context, a yarnclient.App) string {
	if y.cfg.Submit != SubmitCommand || len(y.tagKey) == 0 {
		return ""
	}
	for _, t := range a.Tags() {
		token, ok := y.tokenOfTag(t)
		if !ok {
			continue
		}
		id, err := y.resolve(ctx, token)
		if err != nil {
			y.log.Debug("command token not resolved", "token", token, "app", a.ID, "err", err)
			return ""
		}
		if id == a.ID {
			return token
		}
		y.mu.Lock()
		seen := y.copies[a.ID]
		y.copies[a.ID] = true
		y.mu.Unlock()
		if !seen {
			y.log.Warn("an application carries a copy of the tag of colocd's command submission; not taken for its job",
				"app", a.ID, "user", a.User, "token", token, "job_app", id)
		}
		return ""
	}
	return ""
}

// commandTag is the tag of a command submission's application:
// colocd-app-<token>-<mac>, mac the first 128 bits of HMAC-SHA256(key,
// token) in hex. Only colocd, holding the key, can make it, so no
// application can carry it before colocd's own (a copy of the tag, read
// from the RM, comes after).
func (y *Cluster) commandTag(token string) string {
	return tagAppPrefix + token + "-" + y.tagMAC(token)
}

func (y *Cluster) tagMAC(token string) string {
	m := hmac.New(sha256.New, y.tagKey)
	m.Write([]byte("colocd-app\x00" + strings.ToLower(token)))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// tokenOfTag is the token of an authenticated command tag (commandTag).
func (y *Cluster) tokenOfTag(tag string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.ToLower(tag), tagAppPrefix)
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '-')
	if i < 0 {
		return "", false
	}
	token, mac := rest[:i], rest[i+1:]
	if !strings.HasPrefix(token, commandTokenPrefix) || !hmac.Equal([]byte(mac), []byte(y.tagMAC(token))) {
		return "", false
	}
	return token, true
}

// legacyToken reports a token minted before command tags were
// authenticated (64 random bits; now 128): its application carries
// colocd-app-<token>, looked up only for such tokens.
func legacyToken(token string) bool {
	i := strings.LastIndexByte(token, '-')
	return strings.HasPrefix(token, commandTokenPrefix) && i >= 0 && len(token)-i-1 == 16
}

// ErrNoTagKey: command submission without WithTagKey.
var ErrNoTagKey = errors.New("yarncluster: command submission needs a tag key (WithTagKey)")

// Reserve is new-application (REST) or a fresh token (command).
func (y *Cluster) Reserve(ctx context.Context) (string, error) {
	if y.cfg.Submit == SubmitCommand {
		if len(y.tagKey) < MinTagKeyBytes {
			return "", ErrNoTagKey
		}
		// The token records which RM process was active: if that RM later
		// forgets the application, Forgotten can tell whether it could
		// have.
		info, err := y.c.ClusterInfo(ctx)
		if err != nil {
			return "", fmt.Errorf("cluster info before minting a command token: %w", err)
		}
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("mint command token: %w", err)
		}
		return commandTokenPrefix + strconv.FormatInt(info.ID, 10) + "-" + hex.EncodeToString(b[:]), nil
	}
	na, err := y.c.NewApplication(ctx)
	if err != nil {
		return "", fmt.Errorf("new-application: %w", err)
	}
	return na.ApplicationID, nil
}

// Submit submits j as appID: its application-submission-context with
// the reserved id, its queue and the job's tags; as the job's user with
// yarn.submit_as job_user; with the delegation tokens of yarn.tokens,
// fetched now (addTokens). A definite refusal (4xx but 409, or an
// impossible request) is cluster.ErrRejected; any other failure is
// ambiguous and returned as it is.
func (y *Cluster) Submit(ctx context.Context, appID string, j queue.Job) error {
	if strings.HasPrefix(appID, commandTokenPrefix) {
		return y.submitCommand(ctx, appID, j)
	}
	var sc yarnclient.SubmissionContext
	if len(j.Submit) > 0 {
		if err := json.Unmarshal(j.Submit, &sc); err != nil {
			return fmt.Errorf("%w: job %s submit: %v", cluster.ErrRejected, j.ID, err)
		}
	}
	sc.ApplicationID = appID
	if sc.Queue == "" {
		sc.Queue = j.Queue
	}
	if err := checkContext(j, sc); err != nil { // a job queued before these were refused
		return fmt.Errorf("%w: job %s: %w", cluster.ErrRejected, j.ID, err)
	}
	if sc.ApplicationName == "" {
		sc.ApplicationName = "colocd-" + j.Kind
	}
	sc.AddTags(yarnclient.JobTags(j.ID, j.Kind)...)
	as, err := y.submitUser(j)
	if err != nil {
		return err
	}
	if err := y.addTokens(ctx, &sc, j, as); err != nil {
		return err
	}
	_, err = y.c.SubmitApp(ctx, sc, yarnclient.As(as))
	if err == nil {
		return nil
	}
	// The RM may already have it (a retry after a lost answer): then it is
	// submitted, whatever this answer says.
	if _, aerr := y.c.App(ctx, appID); aerr == nil {
		return nil
	}
	if refused(err) && !errors.Is(err, yarnclient.ErrConflict) && !unauthenticated(err) {
		return y.rejection(as, err)
	}
	return err // ambiguous: a timeout, an unreachable RM, or colocd's own authentication failing
}

// refused reports whether err is a definite no: a 4xx answer, or a request
// the client would not send.
func refused(err error) bool {
	var re *yarnclient.RemoteError
	return errors.As(err, &re) && re.StatusCode >= 400 && re.StatusCode < 500 || errors.Is(err, yarnclient.ErrInvalid)
}

// unauthenticated reports a 401: colocd's own authentication failed (an
// expired ticket, a KDC outage), which says nothing about the job, so the
// job is not failed for it: the submission is retried once colocd can
// authenticate again.
func unauthenticated(err error) bool {
	var re *yarnclient.RemoteError
	return errors.As(err, &re) && re.StatusCode == http.StatusUnauthorized
}

// submitUser is the user j's application is submitted as: "" (colocd)
// unless yarn.submit_as is job_user and the job is another user's.
func (y *Cluster) submitUser(j queue.Job) (string, error) {
	if y.cfg.SubmitAs != SubmitAsJobUser {
		return "", nil
	}
	if j.User == "" {
		return "", fmt.Errorf("%w: job %s has no user to submit as (yarn.submit_as is job_user)", cluster.ErrRejected, j.ID)
	}
	if j.User == y.daemonUser() {
		return "", nil // colocd's own: a doAs of itself would need a proxy-user rule too
	}
	return j.User, nil
}

// daemonUser is the user the RM knows colocd as: yarn.user, or the short
// name of the Kerberos principal (Hadoop's default auth_to_local rule).
func (y *Cluster) daemonUser() string {
	if y.cfg.Auth != AuthKerberos {
		return y.cfg.User
	}
	name, _, _ := strings.Cut(y.cfg.Kerberos.Principal, "@")
	name, _, _ = strings.Cut(name, "/")
	return name
}

// rejection wraps a refusal in cluster.ErrRejected; a refusal to act for
// as (403 AuthorizationException) says which rules refused it.
func (y *Cluster) rejection(as string, err error) error {
	var re *yarnclient.RemoteError
	if as != "" && errors.As(err, &re) && re.StatusCode == http.StatusForbidden && re.Exception == "AuthorizationException" {
		d := cmp.Or(y.daemonUser(), "<colocd's user>")
		return fmt.Errorf("%w: yarn.submit_as is job_user, and the cluster's proxy-user rules do not let %s act for %s "+
			"(hadoop.proxyuser.%s.users, .groups and .hosts in core-site.xml): %w", cluster.ErrRejected, d, as, d, err)
	}
	return fmt.Errorf("%w: %w", cluster.ErrRejected, err)
}

// addTokens fetches the delegation tokens of yarn.tokens for as ("":
// colocd) and puts them into sc's credentials, with
// cancel-tokens-when-complete unless the submitter set it. A refusal
// (4xx, but 401: that is colocd's own authentication failing) rejects the
// job; any other failure is returned as it is: nothing was submitted, and
// the engine finds no application under the id and submits again, with
// fresh tokens. A NameNode with security off issues no token: none is
// needed, and none is added.
func (y *Cluster) addTokens(ctx context.Context, sc *yarnclient.SubmissionContext, j queue.Job, as string) error {
	t := y.cfg.Tokens
	if !t.fetches() {
		return nil
	}
	tokens := map[string]string{}
	if t.RM {
		dt, err := y.c.RMDelegationToken(ctx, t.Renewer, yarnclient.As(as))
		if err != nil {
			return y.tokenError(j, as, "an RM delegation token", err)
		}
		tok, err := yarnclient.ParseToken(dt.Token)
		if err != nil {
			return y.tokenError(j, as, "an RM delegation token", err)
		}
		tok.Service = t.RMService
		tokens[t.RMService] = tok.Encode()
	}
	for _, h := range t.HDFS {
		tok, err := y.c.HDFSDelegationToken(ctx, yarnclient.HDFSTokenRequest{NameNodes: h.URLs, Renewer: t.Renewer, Service: h.Service}, yarnclient.As(as))
		if errors.Is(err, yarnclient.ErrNoToken) {
			y.log.Warn("HDFS issued no delegation token (its security is off); none added", "job", j.ID, "namenodes", h.URLs)
			continue
		}
		if err != nil {
			return y.tokenError(j, as, "an HDFS delegation token from "+strings.Join(h.URLs, ", "), err)
		}
		alias := tok.Service
		if alias == "" {
			alias = h.URLs[0]
		}
		tokens[alias] = tok.Encode()
	}
	if len(tokens) == 0 {
		return nil
	}
	if err := sc.AddTokens(tokens); err != nil {
		return fmt.Errorf("%w: job %s: %v", cluster.ErrRejected, j.ID, err)
	}
	if sc.CancelTokensWhenComplete == nil {
		cancel := true
		sc.CancelTokensWhenComplete = &cancel
	}
	y.log.Info("delegation tokens fetched for the submission", "job", j.ID, "app", sc.ApplicationID, "as", as, "tokens", slices.Sorted(maps.Keys(tokens)))
	return nil
}

// tokenError is the error of a failed token fetch: a rejection when the
// server refused the job's user (4xx but 401), else as it is.
func (y *Cluster) tokenError(j queue.Job, as, what string, err error) error {
	who := "colocd"
	if as != "" {
		who = as
	}
	err = fmt.Errorf("job %s: fetch %s for %s: %w", j.ID, what, who, err)
	if refused(err) && !unauthenticated(err) {
		return y.rejection(as, err)
	}
	return err
}

func (y *Cluster) submitCommand(ctx context.Context, token string, j queue.Job) error {
	if len(y.tagKey) < MinTagKeyBytes {
		return ErrNoTagKey
	}
	tag := y.commandTag(token)
	if _, err := y.resolve(ctx, token); err == nil {
		return nil // submitted before (a retry after a crash)
	} else if !errors.Is(err, cluster.ErrUnknownApp) {
		return fmt.Errorf("look up tag %s before running the command: %w", tag, err)
	}
	// A job queued before these checks (or under another config) is
	// checked again: it fails rather than reach the command.
	params, err := y.commandParams(j)
	if err != nil {
		return fmt.Errorf("%w: job %s: %w", cluster.ErrRejected, j.ID, err)
	}
	if j.Queue != "" && !y.argvHas(yarnclient.PlaceholderQueue) {
		return fmt.Errorf("%w: job %s: queue %q: yarn.command.argv does not pass {{queue}}", cluster.ErrRejected, j.ID, j.Queue)
	}
	spec := yarnclient.CommandSpec{Argv: y.cfg.Command.Argv, Env: y.commandEnv(), Dir: y.cfg.Command.Dir,
		Timeout: y.cfg.Command.Timeout, JobID: j.ID, Kind: j.Kind, User: j.User, Queue: j.Queue, Params: params}
	out, err := y.c.SubmitCommand(ctx, spec, append(yarnclient.JobTags(j.ID, j.Kind), tag))
	_, ferr := y.resolve(ctx, token)
	if ferr == nil {
		return nil
	}
	switch {
	case err == nil:
		// The command succeeded but the RM does not list the app (yet):
		// Sync will look the tag up again.
		return fmt.Errorf("command for job %s succeeded but no application carries tag %s yet (%v)", j.ID, tag, ferr)
	case errors.Is(err, yarnclient.ErrCommandFailed) && errors.Is(ferr, cluster.ErrUnknownApp):
		return fmt.Errorf("%w: %w (output: %s)", cluster.ErrRejected, err, tail(out, 512))
	default:
		return err
	}
}

// commandEnv is the command's environment: the variables of
// yarn.command.inherit_env colocd has, then yarn.command.env.
func (y *Cluster) commandEnv() []string {
	env := make([]string, 0, len(y.cfg.Command.InheritEnv)+len(y.cfg.Command.Env))
	for _, k := range y.cfg.Command.InheritEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, y.cfg.Command.Env...)
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func (y *Cluster) remember(token, appID string) {
	y.mu.Lock()
	y.real[token] = appID
	y.mu.Unlock()
}

// resolve maps a command token to its application id: the first
// application (by start, then id) that carries its tag (commandTag; a
// legacy token's colocd-app-<token>), remembered; cluster.ErrUnknownApp
// when none does.
func (y *Cluster) resolve(ctx context.Context, appID string) (string, error) {
	if !strings.HasPrefix(appID, commandTokenPrefix) {
		return appID, nil
	}
	y.mu.Lock()
	id, ok := y.real[appID]
	y.mu.Unlock()
	if ok {
		return id, nil
	}
	if len(y.tagKey) < MinTagKeyBytes {
		return "", ErrNoTagKey
	}
	apps, err := y.c.AppsByTag(ctx, y.commandTag(appID))
	if err == nil && len(apps) == 0 && legacyToken(appID) {
		apps, err = y.c.AppsByTag(ctx, tagAppPrefix+appID)
	}
	if err != nil {
		return "", err
	}
	if len(apps) == 0 {
		return "", fmt.Errorf("command submission %s: %w", appID, cluster.ErrUnknownApp)
	}
	first := slices.MinFunc(apps, func(a, b yarnclient.App) int {
		return cmp.Or(cmp.Compare(a.StartedTime, b.StartedTime), cmp.Compare(a.ID, b.ID))
	})
	if len(apps) > 1 {
		y.log.Warn("more than one application carries a command submission's tag; the first is the job's",
			"token", appID, "app", first.ID, "user", first.User, "carriers", len(apps))
	}
	y.remember(appID, first.ID)
	return first.ID, nil
}

// App reports an application's phase.
func (y *Cluster) App(ctx context.Context, appID string) (cluster.AppStatus, error) {
	id, err := y.resolve(ctx, appID)
	if err != nil {
		return cluster.AppStatus{}, err
	}
	a, err := y.c.App(ctx, id)
	if errors.Is(err, yarnclient.ErrNotFound) {
		return cluster.AppStatus{}, fmt.Errorf("application %s: %w: %w", id, cluster.ErrUnknownApp, err)
	}
	if err != nil {
		return cluster.AppStatus{}, err
	}
	st := appStatus(a.ID, a.State, a.FinalStatus, a.Diagnostics, a.StartedTime, a.FinishedTime)
	st.User = a.User
	return st, nil
}

// appStatus is an application's status from what the RM and the Timeline
// Server both report (times in ms since the epoch, 0 for none). Its JobID
// stays empty: tags say nothing about who submitted an application.
func appStatus(id, state, final, diag string, started, finished int64) cluster.AppStatus {
	st := cluster.AppStatus{ID: id, Phase: yarnPhase(state, final), Diagnostics: diag}
	if started > 0 {
		st.Started = time.UnixMilli(started)
	}
	if finished > 0 {
		st.Finished = time.UnixMilli(finished)
	}
	return st
}

func yarnPhase(state, final string) cluster.Phase {
	switch strings.ToUpper(state) {
	case "RUNNING":
		return cluster.PhaseRunning
	case "FINISHED":
		switch strings.ToUpper(final) {
		case "FAILED":
			return cluster.PhaseFailed
		case "KILLED":
			return cluster.PhaseKilled
		}
		return cluster.PhaseSucceeded
	case "FAILED":
		return cluster.PhaseFailed
	case "KILLED":
		return cluster.PhaseKilled
	}
	return cluster.PhaseAccepted // NEW, NEW_SAVING, SUBMITTED, ACCEPTED
}

// Forgotten decides what can be proven about appID, which the RM does not
// know (App answered cluster.ErrUnknownApp), before the engine submits its job
// again. In order:
//
//  1. The Timeline Server (yarn.timeline_url), when configured, has every
//     application the RM published: a record gives the outcome; no record
//     proves the application was never submitted.
//  2. An RM forgets an application it issued only by a restart (a new
//     cluster timestamp: the id's timestamp, or the one in a command token,
//     then differs from GET /cluster/info's id) or, once ended, when more
//     than yarn.resourcemanager.max-completed-applications applications have
//     ended since it started (the queue metrics' appsCompleted, appsFailed
//     and appsKilled count them; the oldest are dropped first, so one that
//     ended in this RM's life is dropped only after that many more ended).
//     So the same RM, with no more endings than yarn.max_completed_applications,
//     proves the application was never submitted; so does the same RM
//     still holding an application that ended before the job's admission
//     was recorded (less clockSkew): it drops ended applications oldest
//     first, and appID could only have ended after.
//  3. Otherwise it may have run: cluster.OutcomeUnprovable, and the job is parked.
//
// The Timeline Server's word is trusted: set yarn.timeline_url only where
// the RM publishes every application to it
// (yarn.system-metrics-publisher.enabled).
func (y *Cluster) Forgotten(ctx context.Context, appID string, recorded time.Time) (cluster.Verdict, error) {
	command := strings.HasPrefix(appID, commandTokenPrefix)
	noHistory := false
	if !command && y.cfg.TimelineURL != "" {
		h, err := y.c.HistoryApp(ctx, appID)
		switch {
		case err == nil:
			return cluster.Verdict{Outcome: cluster.OutcomeRan, Status: historyStatus(h),
				Reason: fmt.Sprintf("the Timeline Server has %s as %s/%s", appID, h.AppState, h.FinalAppStatus)}, nil
		case errors.Is(err, yarnclient.ErrNotFound):
			noHistory = true
		default:
			return cluster.Verdict{}, fmt.Errorf("ask the Timeline Server about %s: %w", appID, err)
		}
	}
	info, err := y.c.ClusterInfo(ctx)
	if err != nil {
		return cluster.Verdict{}, fmt.Errorf("cluster info: %w", err)
	}
	m, err := y.c.ClusterMetrics(ctx)
	if err != nil {
		return cluster.Verdict{}, fmt.Errorf("cluster metrics: %w", err)
	}
	issued, known := issuerOf(appID)
	sameRM := known && issued == info.ID
	ended := m.AppsCompleted + m.AppsFailed + m.AppsKilled
	retained := sameRM && ended <= y.cfg.MaxCompletedApps
	switch {
	case retained:
		return cluster.Verdict{Outcome: cluster.OutcomeNeverRan, Reason: fmt.Sprintf(
			"the RM that issued %s (started %s) still holds every application it ran (%d ended, yarn.max_completed_applications %d)",
			appID, time.UnixMilli(info.ID).UTC().Format(time.RFC3339), ended, y.cfg.MaxCompletedApps)}, nil
	case noHistory && sameRM:
		return cluster.Verdict{Outcome: cluster.OutcomeNeverRan, Reason: "neither the RM that issued " + appID + " nor the Timeline Server has it"}, nil
	case sameRM && !recorded.IsZero():
		// The RM drops its ended applications oldest first: one that it
		// still holds and that ended before the job was recorded proves
		// it would still hold appID, which could only have ended after.
		// "Before" leaves clockSkew between colocd's clock and the RM's.
		older, err := y.c.Apps(ctx, yarnclient.AppsFilter{States: []string{"FINISHED", "FAILED", "KILLED"},
			FinishedTimeEnd: recorded.Add(-clockSkew), Limit: 1})
		if err != nil {
			return cluster.Verdict{}, fmt.Errorf("list the applications that ended before %s: %w", recorded.UTC().Format(time.RFC3339), err)
		}
		if len(older) > 0 {
			return cluster.Verdict{Outcome: cluster.OutcomeNeverRan, Reason: fmt.Sprintf(
				"the RM that issued %s still holds %s, which ended before the job was recorded (%s), and drops ended applications oldest first",
				appID, older[0].ID, recorded.UTC().Format(time.RFC3339))}, nil
		}
	case noHistory:
		return cluster.Verdict{Outcome: cluster.OutcomeNeverRanStaleID, Reason: "the Timeline Server never saw " + appID +
			", and the RM that issued it is gone (restarted)"}, nil
	}
	var why string
	switch {
	case !known:
		why = fmt.Sprintf("%s does not say which RM issued it", appID)
	case !sameRM:
		why = fmt.Sprintf("the RM restarted since it issued %s (then started %s, now %s); it may have run before the restart",
			appID, time.UnixMilli(issued).UTC().Format(time.RFC3339), time.UnixMilli(info.ID).UTC().Format(time.RFC3339))
	default:
		why = fmt.Sprintf("%d applications ended since the RM started, more than yarn.max_completed_applications %d: the RM may have dropped %s after it ended",
			ended, y.cfg.MaxCompletedApps, appID)
	}
	if y.cfg.TimelineURL == "" && !command {
		why += "; no yarn.timeline_url to ask the application history"
	}
	return cluster.Verdict{Outcome: cluster.OutcomeUnprovable, Reason: why}, nil
}

// clockSkew is how far colocd's clock and the RM's may disagree when
// Forgotten compares the RM's end times with the time colocd recorded an
// admission: Kerberos's default limit, which a kerberized cluster's clocks
// keep within.
const clockSkew = 5 * time.Minute

// issuerOf is the start time (ms) of the RM process that issued id: an
// application id's cluster timestamp, or the one a command token records.
func issuerOf(id string) (int64, bool) {
	if rest, ok := strings.CutPrefix(id, commandTokenPrefix); ok {
		ts, _, found := strings.Cut(rest, "-")
		if !found {
			return 0, false // a token minted before the RM was recorded
		}
		v, err := strconv.ParseInt(ts, 10, 64)
		return v, err == nil
	}
	return yarnclient.AppIDClusterTimestamp(id)
}

// historyStatus is an application as the Timeline Server reports it.
func historyStatus(h yarnclient.HistoryApp) cluster.AppStatus {
	st := appStatus(h.AppID, h.AppState, h.FinalAppStatus, h.DiagnosticsInfo, h.StartedTime, h.FinishedTime)
	st.User = h.User
	return st
}

// Kill kills an application; with yarn.submit_as job_user as its owner,
// whom the RM always lets kill it (MODIFY_APP), read from its report.
func (y *Cluster) Kill(ctx context.Context, appID string) error {
	id, err := y.resolve(ctx, appID)
	if err != nil {
		return err
	}
	var opts []yarnclient.CallOption
	if y.cfg.SubmitAs == SubmitAsJobUser && !strings.HasPrefix(appID, commandTokenPrefix) {
		a, err := y.c.App(ctx, id)
		if errors.Is(err, yarnclient.ErrNotFound) {
			return fmt.Errorf("application %s: %w: %w", id, cluster.ErrUnknownApp, err)
		}
		if err != nil {
			return fmt.Errorf("read the owner of application %s to kill it as them: %w", id, err)
		}
		if a.User != "" && a.User != y.daemonUser() {
			opts = append(opts, yarnclient.As(a.User))
		}
	}
	err = y.c.KillApp(ctx, id, opts...)
	if errors.Is(err, yarnclient.ErrNotFound) {
		return fmt.Errorf("application %s: %w: %w", id, cluster.ErrUnknownApp, err)
	}
	return err
}
