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
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/yarnclient"
)

// AppOwners is the user an application of j must belong to (engine.appOwners):
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

// errNoTagKey: command submission without WithTagKey.
var errNoTagKey = errors.New("yarncluster: command submission needs a tag key (WithTagKey)")

// Reserve is new-application (REST) or a fresh token (command).
func (y *Cluster) Reserve(ctx context.Context) (string, error) {
	if y.cfg.Submit == SubmitCommand {
		if len(y.tagKey) < MinTagKeyBytes {
			return "", errNoTagKey
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

// daemonUser is the user the RM knows colocd as (Config.DaemonUser).
func (y *Cluster) daemonUser() string { return y.cfg.DaemonUser() }

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
		return errNoTagKey
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
		return "", errNoTagKey
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
