package daemon

import (
	"errors"
	"fmt"
	"math"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/colocd/colocd/daemon/api"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/internal/authtolocal"
	"github.com/colocd/colocd/internal/metricsource"
)

// Validate reports the first key whose value is out of bounds, naming the
// key and the bound (*configError wrapping ErrConfig).
func (c Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return cfgErr("listen", "must be host:port, got %q", c.Listen)
	}
	if c.DataDir == "" {
		return cfgErr("data_dir", "must not be empty")
	}
	if c.DataDirReserveBytes < 0 {
		return cfgErr("data_dir_reserve_bytes", "must be 0 (no reserve) or more, got %d", c.DataDirReserveBytes)
	}
	if !oneOf(c.LogLevel, "debug", "info", "warn", "error") {
		return cfgErr("log_level", "must be one of debug|info|warn|error, got %q", c.LogLevel)
	}
	if !oneOf(c.LogFormat, logAuto, logText, logJSON, logJournal) {
		return cfgErr("log_format", "must be auto, text, json or journal, got %q", c.LogFormat)
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		if c.TLS.CertFile == "" {
			return cfgErr("tls.cert_file", "must be set when tls.key_file is")
		}
		return cfgErr("tls.key_file", "must be set when tls.cert_file is")
	}
	if err := validateTokens(c.Tokens); err != nil {
		return err
	}
	if err := c.validateAuth(); err != nil {
		return err
	}
	if err := c.validateHA(); err != nil {
		return err
	}
	if err := c.Metrics.validate(); err != nil {
		return err
	}
	if err := c.API.validate(); err != nil {
		return err
	}
	if err := c.Journal.validate(); err != nil {
		return err
	}
	switch c.Backend {
	case backendSim:
		if err := c.Sim.validate(); err != nil {
			return err
		}
	case backendYarn:
		if err := sectionErr("yarn", c.Yarn.Validate()); err != nil {
			return err
		}
		if err := c.validateMetrics(); err != nil {
			return err
		}
	default:
		return cfgErr("backend", "must be sim or yarn, got %q", c.Backend)
	}
	if err := c.Goodness.validate(c.Backend == backendYarn); err != nil {
		return err
	}
	if err := c.validateLearning(); err != nil {
		return err
	}
	if err := c.Admission.validate(); err != nil {
		return err
	}
	if err := c.Pipeline.Validate(); err != nil {
		return err
	}
	if c.Retention.FinishedAfter < 0 {
		return cfgErr("retention.finished_after", "must be >= 0 (0 = keep forever), got %v", c.Retention.FinishedAfter)
	}
	if _, err := cron.ParseStandard(c.Retention.Schedule); err != nil {
		return cfgErr("retention.schedule", "not a cron spec: %v", err)
	}
	if c.ShutdownTimeout < 100*time.Millisecond {
		return cfgErr("shutdown_timeout", "must be >= 100ms, got %v", c.ShutdownTimeout)
	}
	return nil
}

// validate checks the journal section.
func (j journalConfig) validate() error {
	if j.MaxDecisions < 1 || j.MaxDecisions > maxJournalDecisions {
		return cfgErr("journal.max_decisions", "must be in [1, %d], got %d", maxJournalDecisions, j.MaxDecisions)
	}
	if j.MaxGoodness < 1 || j.MaxGoodness > maxJournalGoodness {
		return cfgErr("journal.max_goodness", "must be in [1, %d], got %d", maxJournalGoodness, j.MaxGoodness)
	}
	return nil
}

// validate checks the admission section.
func (a admissionConfig) validate() error {
	if a.Tick < time.Millisecond {
		return cfgErr("admission.tick", "must be >= 1ms, got %v", a.Tick)
	}
	if a.KickGap < 0 || a.KickGap > time.Minute {
		return cfgErr("admission.kick_gap", "must be between 0 and 1m, got %v", a.KickGap)
	}
	if a.MaxRunning < 0 {
		return cfgErr("admission.max_running", "must be >= 0 (0 = no cap), got %d", a.MaxRunning)
	}
	if a.Mode != engine.ModeActive && a.Mode != engine.ModeShadow {
		return cfgErr("admission.mode", "must be active or shadow, got %q", a.Mode)
	}
	if b := a.Backoff; b.Initial < 0 {
		return cfgErr("admission.backoff.initial", "must be >= 0 (0 = no backoff), got %v", b.Initial)
	} else if b.Initial > 0 && b.Max < b.Initial {
		return cfgErr("admission.backoff.max", "must be >= admission.backoff.initial (%v), got %v", b.Initial, b.Max)
	}
	return nil
}

func (s simConfig) validate() error {
	if s.Workload == "" {
		return cfgErr("sim.workload", "must be set when backend is sim")
	}
	if !(s.Speed > 0 && s.Speed <= 1e6) {
		return cfgErr("sim.speed", "must be in (0, 1e6], got %v", s.Speed)
	}
	if s.MetricsInterval < time.Second {
		return cfgErr("sim.metrics_interval", "must be >= 1s, got %v", s.MetricsInterval)
	}
	return nil
}

func (g goodnessConfig) validate(required bool) error {
	for _, f := range []struct {
		key string
		v   float64
	}{
		{"goodness.disk_read_mbps", g.DiskReadMBps}, {"goodness.disk_write_mbps", g.DiskWriteMBps},
		{"goodness.net_recv_mbps", g.NetRecvMBps}, {"goodness.net_sent_mbps", g.NetSentMBps},
	} {
		switch {
		case f.v < 0 || f.v != f.v:
			return cfgErr(f.key, "must be >= 0, got %v", f.v)
		case required && f.v == 0:
			return cfgErr(f.key, "must be > 0 on the yarn backend (the node's hardware maximum)")
		}
	}
	if g.ReferenceVCores < 0 || g.ReferenceVCores > maxReferenceVCores {
		return cfgErr("goodness.reference_vcores", "must be in [0, %d], got %d", maxReferenceVCores, g.ReferenceVCores)
	}
	for i, ng := range g.NodeGroups {
		key := fmt.Sprintf("goodness.node_groups[%d]", i)
		if ng.Hosts == "" {
			return cfgErr(key+".hosts", "required: an RE2 pattern of the group's host names")
		}
		if _, err := hostsPattern(ng.Hosts); err != nil {
			return cfgErr(key+".hosts", "%q is not an RE2 pattern: %v", ng.Hosts, err)
		}
		set := false
		for _, f := range []struct {
			key string
			v   float64
		}{{"disk_read_mbps", ng.DiskReadMBps}, {"disk_write_mbps", ng.DiskWriteMBps}, {"net_recv_mbps", ng.NetRecvMBps}, {"net_sent_mbps", ng.NetSentMBps}} {
			if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
				return cfgErr(key+"."+f.key, "must be a finite number >= 0 (0: the reference node's), got %v", f.v)
			}
			set = set || f.v > 0
		}
		if !set {
			return cfgErr(key, "sets no maximum: give at least one of disk_read_mbps, disk_write_mbps, net_recv_mbps, net_sent_mbps")
		}
	}
	return nil
}

// hostsPattern compiles a node group's hosts pattern to match whole names.
func hostsPattern(p string) (*regexp.Regexp, error) { return regexp.Compile(`^(?:` + p + `)$`) }

// maxReferenceVCores bounds goodness.reference_vcores: far above any node.
const maxReferenceVCores = 1 << 20

func (l learningConfig) validate() error {
	if _, err := cron.ParseStandard(l.Schedule); err != nil {
		return cfgErr("learning.schedule", "not a cron spec: %v", err)
	}
	if err := sectionErr("learning", l.Config.Validate()); err != nil {
		return err
	}
	// The file states the values: a zero, which bandit reads as "its
	// default" (not colocd's), is refused.
	if !(l.StepSize > 0 && l.StepSize <= 10) {
		return cfgErr("learning.step_size", "must be in (0, 10], got %v", l.StepSize)
	}
	if !(l.RecencyAlpha > 0) {
		return cfgErr("learning.recency_alpha", "must be in (0, 1], got %v", l.RecencyAlpha)
	}
	if l.Credit != engine.CreditLater && l.Credit != engine.CreditSymmetric {
		return cfgErr("learning.credit", "must be later or symmetric, got %q", l.Credit)
	}
	if l.Aggregate != engine.AggregatePair && l.Aggregate != engine.AggregateNode {
		return cfgErr("learning.aggregate", "must be pair or node, got %q", l.Aggregate)
	}
	if l.MaxKindsPerNode < 2 || l.MaxKindsPerNode > 16 {
		return cfgErr("learning.max_kinds_per_node", "must be in [2, 16], got %d", l.MaxKindsPerNode)
	}
	if l.PairReward != engine.RewardGoodness && l.PairReward != engine.RewardResidual {
		return cfgErr("learning.pair_reward", "must be goodness or residual, got %q", l.PairReward)
	}
	return sectionErr("learning.profile", l.Profile.Validate())
}

func oneOf(s string, options ...string) bool {
	for _, o := range options {
		if s == o {
			return true
		}
	}
	return false
}

// validateMetrics checks metrics.source and the section it names (the
// collector validates its own sections).
func (c *Config) validateMetrics() error {
	ms, err := metricsSourceOf(*c)
	if err != nil {
		return err
	}
	return sectionErr(ms.section, ms.validate(*c))
}

// validateLearning checks the learning section, then where its placement
// is read (learning.placement, placement_tolerance, foreign) against the
// sections that read needs.
func (c *Config) validateLearning() error {
	if err := c.Learning.validate(); err != nil {
		return err
	}
	l := c.Learning
	switch l.Placement {
	case placementRM:
	case placementInflux:
		if c.Backend != backendYarn {
			return cfgErr("learning.placement", "%s reads the colocd-telegraf-yarn plugin's samples of a YARN cluster: it needs backend yarn, got %q (use %s)",
				placementInflux, c.Backend, placementRM)
		}
		if err := sectionErr("influx", c.Influx.Validate()); err != nil {
			return err
		}
	default:
		return cfgErr("learning.placement", "must be %s or %s, got %q", placementRM, placementInflux, l.Placement)
	}
	if l.ContainerUsage && c.Backend == backendYarn && l.Placement != placementInflux {
		if err := sectionErr("influx", c.Influx.Validate()); err != nil {
			return err
		}
	}
	if err := sectionErr("learning.foreign", l.Foreign.ForeignConfig.Validate()); err != nil {
		return err
	}
	if err := sectionErr("learning", l.PlacementConfig().Validate()); err != nil {
		return err
	}
	if l.Foreign.MaxKinds >= c.API.MaxKinds {
		return cfgErr("learning.foreign.max_kinds", "must be below api.max_kinds (%d), which foreign kinds count against, got %d",
			c.API.MaxKinds, l.Foreign.MaxKinds)
	}
	return nil
}

// validate checks the metrics section's host mapping, naming the key.
func (m metricsConfig) validate() error {
	if err := m.Hosts.Validate(); err != nil {
		var fe *metricsource.FieldError
		if errors.As(err, &fe) {
			return cfgErr("metrics.hosts."+fe.Field, "%s", fe.Msg)
		}
		return cfgErr("metrics.hosts", "%v", err)
	}
	return nil
}

// validateTokens checks the API tokens, naming the entry.
func validateTokens(tokens []tokenConfig) error {
	seen := map[string]bool{}
	for i, t := range tokens {
		key := fmt.Sprintf("tokens[%d]", i)
		switch {
		case len(t.Token) < 8:
			return cfgErr(key+".token", "must be at least 8 characters")
		case seen[t.Token]:
			return cfgErr(key+".token", "duplicates an earlier token")
		case t.User == "":
			return cfgErr(key+".user", "must not be empty")
		case t.Role == 0:
			return cfgErr(key+".role", "must be set (reader, submitter or admin)")
		}
		seen[t.Token] = true
	}
	return nil
}

// validate checks the api section's bounds.
func (a apiConfig) validate() error {
	switch {
	case a.MaxBodyBytes < 1024 || a.MaxBodyBytes > 1<<30:
		return cfgErr("api.max_body_bytes", "must be in [1024, 2^30], got %d", a.MaxBodyBytes)
	case a.ReadTimeout < time.Second || a.ReadTimeout > time.Hour:
		return cfgErr("api.read_timeout", "must be in [1s, 1h], got %v", a.ReadTimeout)
	case a.WriteTimeout < time.Second || a.WriteTimeout > time.Hour:
		return cfgErr("api.write_timeout", "must be in [1s, 1h], got %v", a.WriteTimeout)
	case a.MaxConnections < 8 || a.MaxConnections > 1<<20:
		return cfgErr("api.max_connections", "must be in [8, 1048576], got %d", a.MaxConnections)
	case a.MaxKinds < 1 || a.MaxKinds > 100000:
		return cfgErr("api.max_kinds", "must be in [1, 100000], got %d", a.MaxKinds)
	}
	return nil
}

// validateAuth checks how callers authenticate and what they may do:
// api.auth and its sections, tls.client_auth, the ACLs, the proxy rules,
// and that replicas can forward an identity they authenticated.
func (c Config) validateAuth() error {
	a := c.API
	switch a.Auth {
	case api.AuthTokens, api.AuthBoth, api.AuthKerberos:
	default:
		return cfgErr("api.auth", "must be tokens, kerberos or both, got %q", a.Auth)
	}
	if a.Auth != api.AuthTokens {
		if a.Kerberos.Keytab == "" {
			return cfgErr("api.kerberos.keytab", "must be set with api.auth %s: the keytab of the service's HTTP/<host> principal", a.Auth)
		}
		if strings.TrimSpace(a.Kerberos.Principal) == "" {
			return cfgErr("api.kerberos.principal", "must be set: HTTP/_HOST (Hadoop's default), a comma-separated list, or *")
		}
		if _, err := authtolocal.Parse(a.Kerberos.AuthToLocal, "REALM"); err != nil {
			return cfgErr("api.kerberos.auth_to_local", "%v", err)
		}
		if a.Auth == api.AuthKerberos && len(c.Tokens) > 0 {
			return cfgErr("tokens", "%d tokens with api.auth kerberos, which takes none: set api.auth both to keep them", len(c.Tokens))
		}
	}
	switch c.TLS.ClientAuth {
	case clientAuthNone:
	case clientAuthOptional, clientAuthRequire:
		if c.TLS.CertFile == "" {
			return cfgErr("tls.client_auth", "%s needs HTTPS: set tls.cert_file and tls.key_file", c.TLS.ClientAuth)
		}
		if c.TLS.ClientCAFile == "" {
			return cfgErr("tls.client_ca_file", "must be set with tls.client_auth %s: the CAs that sign client certificates", c.TLS.ClientAuth)
		}
	default:
		return cfgErr("tls.client_auth", "must be none, optional or require, got %q", c.TLS.ClientAuth)
	}
	for _, acl := range []struct{ key, v string }{{"api.acl.reader", a.ACL.Reader}, {"api.acl.submitter", a.ACL.Submitter}, {"api.acl.admin", a.ACL.Admin}} {
		if _, err := api.ParseACL(acl.v); err != nil {
			return cfgErr(acl.key, "%v", err)
		}
	}
	if _, err := apiProxyRules(a.ProxyUsers); err != nil {
		return err
	}
	for i, g := range a.JobGroups {
		if g == "" || strings.ContainsAny(g, " \t,") {
			return cfgErr(fmt.Sprintf("api.job_groups[%d]", i), "%q is not a group name", g)
		}
	}
	if c.HA.Enabled() && c.HA.ForwardKeyFile == "" && (a.Auth != api.AuthTokens || c.TLS.ClientAuth != clientAuthNone) {
		return cfgErr("ha.forward_key_file", "must be set with api.auth %s or tls.client_auth %s: a follower authenticates a request itself and forwards the identity to the leader signed with this key (a Kerberos ticket or a client certificate cannot be passed on)",
			a.Auth, c.TLS.ClientAuth)
	}
	return nil
}

// apiProxyRules are the proxy rules of api.proxy_users, checked.
func apiProxyRules(list []proxyUserConfig) ([]api.ProxyRule, error) {
	out := make([]api.ProxyRule, 0, len(list))
	for i, p := range list {
		key := fmt.Sprintf("api.proxy_users[%d]", i)
		if p.User == "" || strings.ContainsAny(p.User, " \t@/") {
			return nil, cfgErr(key+".user", "%q is not a user name", p.User)
		}
		if len(p.Hosts) == 0 {
			return nil, cfgErr(key+".hosts", "must name the client addresses the rule allows (\"*\" for any): hadoop.proxyuser.%s.hosts", p.User)
		}
		if len(p.Users) == 0 && len(p.Groups) == 0 {
			return nil, cfgErr(key+".users", "the rule names no users and no groups: it would allow nothing")
		}
		r := api.ProxyRule{User: p.User, Users: p.Users, Groups: p.Groups, Hosts: p.Hosts, Name: key}
		if err := api.CheckProxyRule(&r); err != nil {
			return nil, cfgErr(key+".hosts", "%v", err)
		}
		out = append(out, r)
	}
	return out, nil
}
