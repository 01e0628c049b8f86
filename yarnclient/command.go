package yarnclient

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults of CommandSpec.
const (
	defaultTagEnv         = "COLOCD_YARN_TAGS"
	defaultCommandTimeout = 5 * time.Minute
	defaultMaxOutput      = 64 << 10
	// commandWaitDelay bounds how long Wait waits for the output pipes after
	// the process exited or was killed (a daemonised grandchild can hold
	// them open).
	commandWaitDelay = 5 * time.Second
)

// Placeholders expanded in the elements of CommandSpec.Argv (never in
// argv[0]; CheckArgv says where each may go).
const (
	placeholderTags  = "{{tags}}"   // the tags, comma-separated
	placeholderJobID = "{{job_id}}" // CommandSpec.JobID
	placeholderKind  = "{{kind}}"   // CommandSpec.Kind
	placeholderUser  = "{{user}}"   // CommandSpec.User: the job's user, from its API token
	PlaceholderQueue = "{{queue}}"  // CommandSpec.Queue: the job's YARN queue
	// PlaceholderParamPrefix starts {{param.NAME}}: CommandSpec.Params[NAME].
	PlaceholderParamPrefix = "{{param."
)

// Variables colocd sets in a submission command's environment, besides
// CommandSpec.TagEnv. paramEnvPrefix + NAME upper-cased carries parameter
// NAME (main_class: COLOCD_PARAM_ and MAIN_CLASS).
const (
	envJobID       = "COLOCD_JOB_ID"
	envJobKind     = "COLOCD_JOB_KIND"
	envJobUser     = "COLOCD_JOB_USER"
	envJobQueue    = "COLOCD_JOB_QUEUE"
	paramEnvPrefix = "COLOCD_PARAM_"
)

// CommandSpec is how to start a job by running a submitter, e.g.
// ["spark-submit", "--master", "yarn", "--queue", "{{queue}}", "--conf",
// "spark.yarn.tags={{tags}}", "--class", "{{param.main_class}}", ...] or
// ["flink", "run", "-m", "yarn-cluster", "-Dyarn.tags={{tags}}", ...].
// The tags reach the command in two ways: the {{tags}} placeholder and the
// TagEnv environment variable; the submitter must pass them on to YARN so
// that the application can be found by its tags afterwards.
//
// The command is run directly (no shell), with the environment Env and
// colocd's own variables only: nothing of the daemon's environment reaches
// it unless Env carries it. Spark's, YARN's and Flink's launchers are bash
// scripts, so a variable such as BASH_ENV, or LD_PRELOAD, in Env runs code
// as the daemon's user: Env is the operator's, never a submitter's.
type CommandSpec struct {
	Argv []string // program and arguments, with placeholders; run directly, no shell
	// Env is the command's whole environment (KEY=VALUE) besides the
	// variables colocd adds (TagEnv, COLOCD_JOB_*, COLOCD_PARAM_*), which
	// win over Env's.
	Env     []string
	Dir     string        // working directory; "" is the daemon's
	Timeout time.Duration // 0 → defaultCommandTimeout
	// TagEnv names the variable that carries the comma-separated tags;
	// "" → COLOCD_YARN_TAGS.
	TagEnv string
	// JobID, Kind, User and Queue fill {{job_id}}, {{kind}}, {{user}} and
	// {{queue}}, and COLOCD_JOB_ID, _KIND, _USER and _QUEUE. Params fill
	// {{param.NAME}} and COLOCD_PARAM_<NAME>. Values are substituted
	// verbatim, each within its argv element: check them (CheckArgv keeps
	// placeholders out of shell scripts).
	JobID, Kind, User, Queue string
	Params                   map[string]string
	// MaxOutput is how many trailing bytes of stdout+stderr are kept;
	// 0 → 64 KiB.
	MaxOutput int
}

// ExpandArgv returns spec.Argv with the placeholders replaced. An element
// that is only a {{param.NAME}} whose value is empty (an optional
// parameter left out) is left out.
func (spec CommandSpec) ExpandArgv(tags []string) []string {
	out := make([]string, 0, len(spec.Argv))
	for i, a := range spec.Argv {
		if i > 0 {
			if name, ok := soleParam(a); ok && spec.Params[name] == "" {
				continue
			}
		}
		out = append(out, expand(a, func(p string) (string, bool) { return spec.value(p, tags) }))
	}
	return out
}

// value is the value of placeholder p ("tags", "param.x"); ok false when
// p is no placeholder.
func (spec CommandSpec) value(p string, tags []string) (string, bool) {
	switch p {
	case "tags":
		return strings.Join(tags, ","), true
	case "job_id":
		return spec.JobID, true
	case "kind":
		return spec.Kind, true
	case "user":
		return spec.User, true
	case "queue":
		return spec.Queue, true
	}
	if name, ok := strings.CutPrefix(p, "param."); ok {
		return spec.Params[name], true
	}
	return "", false
}

// expand replaces every {{p}} in s for which value answers ok; others stay
// as written.
func expand(s string, value func(p string) (string, bool)) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		if v, ok := value(s[i+2 : i+j]); ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+j+2])
		}
		s = s[i+j+2:]
	}
}

// soleParam reports whether argv element a is exactly one {{param.NAME}},
// and NAME.
func soleParam(a string) (string, bool) {
	name, ok := strings.CutPrefix(a, PlaceholderParamPrefix)
	if !ok || !strings.HasSuffix(name, "}}") {
		return "", false
	}
	name = strings.TrimSuffix(name, "}}")
	return name, name != "" && !strings.ContainsAny(name, "{}")
}

// ParamEnv is the variable that carries parameter name in a submission
// command's environment: COLOCD_PARAM_ and the name upper-cased.
func ParamEnv(name string) string { return paramEnvPrefix + strings.ToUpper(name) }

// ArgvError says which element of a submission command's argv is wrong
// and why. It wraps ErrInvalid.
type ArgvError struct {
	Index  int
	Reason string
}

func (e *ArgvError) Error() string { return fmt.Sprintf("argv[%d]: %s", e.Index, e.Reason) }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *ArgvError) Unwrap() error { return ErrInvalid }

// shells are the programs whose -c argument is shell code.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "ksh": true, "mksh": true, "zsh": true, "ash": true}

// envRef finds what a shell would expand but an exec never does: ${...}
// and $NAME in capitals (a Java class such as Outer$Inner is left alone).
var envRef = regexp.MustCompile(`\$\{[^}]*\}|\$[A-Z_][A-Z0-9_]*\b`)

// CheckArgv checks a submission command's argv before it is used, as an
// *ArgvError naming the element:
//
//   - argv[0] is the program: non-empty, without placeholders;
//   - every {{...}} is a placeholder: {{tags}}, {{job_id}}, {{kind}},
//     {{user}}, {{queue}}, or {{param.NAME}} for a NAME param declares;
//   - the command runs without a shell, so ${VAR} or $VAR is passed as
//     written, never expanded, and is refused (use a placeholder);
//   - when argv runs a shell's -c script (sh, bash, dash, ksh, zsh), the
//     script takes no placeholder: a value spliced into shell code could run
//     as code. The script reads the values from its environment instead
//     ($COLOCD_YARN_TAGS, $COLOCD_JOB_ID, $COLOCD_PARAM_<NAME>, ...), and
//     may expand variables; the elements after it are its $0, $1, ...
func CheckArgv(argv []string, param func(name string) bool) error {
	if len(argv) == 0 || strings.TrimSpace(argv[0]) == "" {
		return &ArgvError{Index: 0, Reason: "the program is missing"}
	}
	if strings.Contains(argv[0], "{{") {
		return &ArgvError{Index: 0, Reason: fmt.Sprintf("%q: the program may not be a placeholder", argv[0])}
	}
	script := -1
	if shells[filepath.Base(argv[0])] {
		for i := 1; i < len(argv); i++ {
			a := argv[i]
			if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a, "c") && !strings.Contains(a, "{{") {
				script = i + 1
				break
			}
		}
	}
	for i, a := range argv {
		if i == script {
			if strings.Contains(a, "{{") {
				return &ArgvError{Index: i, Reason: fmt.Sprintf("%q is a shell script: a placeholder there would be spliced into shell code; "+
					"read the value from the environment instead ($%s, $%s, $%s, $%s, $%s, $%sNAME)",
					a, defaultTagEnv, envJobID, envJobKind, envJobUser, envJobQueue, paramEnvPrefix)}
			}
			continue
		}
		if i > 0 && script < 0 {
			if m := envRef.FindString(a); m != "" {
				return &ArgvError{Index: i, Reason: fmt.Sprintf("%q: the command runs without a shell, so %s is passed as written, never expanded; "+
					"use a placeholder ({{tags}}, {{job_id}}, {{kind}}, {{user}}, {{queue}}, {{param.NAME}})", a, m)}
			}
		}
		if err := checkPlaceholders(a, param); err != nil {
			return &ArgvError{Index: i, Reason: fmt.Sprintf("%q: %v", a, err)}
		}
	}
	return nil
}

// checkPlaceholders checks every {{...}} of one argv element.
func checkPlaceholders(a string, param func(string) bool) error {
	for s := a; ; {
		i := strings.Index(s, "{{")
		if i < 0 {
			return nil
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			return fmt.Errorf("%q is not closed by }}", s[i:])
		}
		p := s[i+2 : i+j]
		switch p {
		case "tags", "job_id", "kind", "user", "queue":
		default:
			name, ok := strings.CutPrefix(p, "param.")
			switch {
			case !ok:
				return fmt.Errorf("{{%s}} is no placeholder (there are {{tags}}, {{job_id}}, {{kind}}, {{user}}, {{queue}} and {{param.NAME}})", p)
			case param == nil || !param(name):
				return fmt.Errorf("{{%s}} names no parameter declared in params", p)
			}
		}
		s = s[i+j+2:]
	}
}

// SubmitCommand runs the submission command with the tags injected and
// returns the tail of its combined output. On timeout the command's whole
// process group is killed and the error matches errCommandTimeout; a non-zero
// exit matches ErrCommandFailed; both are *commandError carrying the output.
// The command is run once; afterwards look the application up by its tags
// (the command may have submitted it even when it failed).
func (c *Client) SubmitCommand(ctx context.Context, spec CommandSpec, tags []string) ([]byte, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, fmt.Errorf("%w: CommandSpec.Argv: empty", ErrInvalid)
	}
	if spec.Timeout < 0 {
		return nil, fmt.Errorf("%w: CommandSpec.Timeout: %v is negative", ErrInvalid, spec.Timeout)
	}
	for _, kv := range spec.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, fmt.Errorf("%w: CommandSpec.Env: %q is not KEY=VALUE", ErrInvalid, kv)
		}
	}
	for name, v := range spec.Params {
		if name == "" || strings.ContainsAny(name, "={}\x00") || strings.ContainsRune(v, 0) {
			return nil, fmt.Errorf("%w: CommandSpec.Params: %q=%q is no parameter", ErrInvalid, name, v)
		}
	}
	for _, t := range tags {
		if strings.Contains(t, ",") {
			return nil, fmt.Errorf("%w: tags: %q contains a comma", ErrInvalid, t)
		}
	}
	timeout := spec.Timeout
	if timeout == 0 {
		timeout = defaultCommandTimeout
	}
	tagEnv := spec.TagEnv
	if tagEnv == "" {
		tagEnv = defaultTagEnv
	}
	maxOut := spec.MaxOutput
	if maxOut <= 0 {
		maxOut = defaultMaxOutput
	}
	argv := spec.ExpandArgv(tags)

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = spec.Dir
	// Never the daemon's environment: exec.Cmd inherits it when Env is nil.
	cmd.Env = append(make([]string, 0, len(spec.Env)+5+len(spec.Params)), spec.Env...)
	cmd.Env = append(cmd.Env,
		tagEnv+"="+strings.Join(tags, ","),
		envJobID+"="+spec.JobID,
		envJobKind+"="+spec.Kind,
		envJobUser+"="+spec.User,
		envJobQueue+"="+spec.Queue,
	)
	for _, name := range slices.Sorted(maps.Keys(spec.Params)) {
		cmd.Env = append(cmd.Env, ParamEnv(name)+"="+spec.Params[name])
	}
	out := &tailBuffer{max: maxOut}
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.WaitDelay = commandWaitDelay
	setProcessGroup(cmd) // kill the whole group on cancel (unix)

	c.log.Info("running submit command", "argv0", argv[0], "job", spec.JobID, "kind", spec.Kind, "timeout", timeout)
	// On Linux the command is started with a parent-death signal, which
	// the kernel sends when the thread that forked it ends, not the
	// process. A Go thread ends when a goroutine locked to it returns
	// locked; holding this one locked until the command has ended keeps
	// any other goroutine off it, so the signal comes only with the
	// daemon's death (then the command cannot submit after a restart
	// has looked its tags up and found nothing).
	err := func() error {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		return cmd.Run()
	}()
	if err == nil {
		return out.Bytes(), nil
	}
	ce := &commandError{Argv: argv, ExitCode: -1, Output: out.Bytes(), Err: err}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		ce.ExitCode = ee.ExitCode()
	}
	if cerr := ctx.Err(); cerr != nil {
		ce.TimedOut = errors.Is(cerr, context.DeadlineExceeded)
		ce.Err = fmt.Errorf("%w (%v)", cerr, err)
	}
	return ce.Output, ce
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int64
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		t.dropped += int64(len(t.buf) + len(p) - t.max)
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.buf...)
}
