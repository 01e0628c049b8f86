package yarnclient

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Defaults of CommandSpec.
const (
	DefaultTagEnv         = "COLOCD_YARN_TAGS"
	DefaultCommandTimeout = 5 * time.Minute
	DefaultMaxOutput      = 64 << 10
	// commandWaitDelay bounds how long Wait waits for the output pipes after
	// the process exited or was killed (a daemonised grandchild can hold
	// them open).
	commandWaitDelay = 5 * time.Second
)

// Placeholders expanded in every element of CommandSpec.Argv.
const (
	PlaceholderTags  = "{{tags}}"   // the tags, comma-separated
	PlaceholderJobID = "{{job_id}}" // CommandSpec.JobID
	PlaceholderKind  = "{{kind}}"   // CommandSpec.Kind
)

// CommandSpec is how to start a job by running a submitter, e.g.
// ["spark-submit", "--master", "yarn", "--conf", "spark.yarn.tags={{tags}}", ...]
// or ["flink", "run", "-m", "yarn-cluster", "-Dyarn.tags={{tags}}", ...].
// The tags reach the command in two ways: the {{tags}} placeholder and the
// TagEnv environment variable; the submitter must pass them on to YARN so
// that FindAppByTag can find the application afterwards.
type CommandSpec struct {
	Argv    []string      // program and arguments; run directly, no shell
	Env     []string      // KEY=VALUE added to the daemon's environment
	Dir     string        // working directory; "" is the daemon's
	Timeout time.Duration // 0 → DefaultCommandTimeout
	// TagEnv names the variable that carries the comma-separated tags;
	// "" → COLOCD_YARN_TAGS.
	TagEnv string
	// JobID and Kind fill {{job_id}} and {{kind}}, and COLOCD_JOB_ID /
	// COLOCD_JOB_KIND. They are substituted verbatim: do not put the
	// placeholders inside a "sh -c" string unless the values are trusted.
	JobID, Kind string
	// MaxOutput is how many trailing bytes of stdout+stderr are kept;
	// 0 → 64 KiB.
	MaxOutput int
}

// ExpandArgv returns spec.Argv with the placeholders replaced.
func (spec CommandSpec) ExpandArgv(tags []string) []string {
	rep := strings.NewReplacer(
		PlaceholderTags, strings.Join(tags, ","),
		PlaceholderJobID, spec.JobID,
		PlaceholderKind, spec.Kind,
	)
	out := make([]string, len(spec.Argv))
	for i, a := range spec.Argv {
		out[i] = rep.Replace(a)
	}
	return out
}

// SubmitCommand runs the submission command with the tags injected and
// returns the tail of its combined output. On timeout the command's whole
// process group is killed and the error matches ErrCommandTimeout; a non-zero
// exit matches ErrCommandFailed; both are *CommandError carrying the output.
// The command is run once; afterwards use FindAppByTag to learn the
// application id (the command may have submitted it even when it failed).
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
	for _, t := range tags {
		if strings.Contains(t, ",") {
			return nil, fmt.Errorf("%w: tags: %q contains a comma", ErrInvalid, t)
		}
	}
	timeout := spec.Timeout
	if timeout == 0 {
		timeout = DefaultCommandTimeout
	}
	tagEnv := spec.TagEnv
	if tagEnv == "" {
		tagEnv = DefaultTagEnv
	}
	maxOut := spec.MaxOutput
	if maxOut <= 0 {
		maxOut = DefaultMaxOutput
	}
	argv := spec.ExpandArgv(tags)

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = spec.Dir
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Env = append(cmd.Env,
		tagEnv+"="+strings.Join(tags, ","),
		"COLOCD_JOB_ID="+spec.JobID,
		"COLOCD_JOB_KIND="+spec.Kind,
	)
	out := &tailBuffer{max: maxOut}
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.WaitDelay = commandWaitDelay
	setProcessGroup(cmd) // kill the whole group on cancel (unix)

	c.log.Info("running submit command", "argv0", argv[0], "job", spec.JobID, "kind", spec.Kind, "timeout", timeout)
	err := cmd.Run()
	if err == nil {
		return out.Bytes(), nil
	}
	ce := &CommandError{Argv: argv, ExitCode: -1, Output: out.Bytes(), Err: err}
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
