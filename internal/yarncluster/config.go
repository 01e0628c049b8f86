package yarncluster

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/colocd/colocd/yarnclient"
)

// Config is the config file's yarn section: where the ResourceManager is
// and how jobs reach it.
type Config struct {
	RMURLs  []string      `mapstructure:"rm_urls"` // HA: tried in order
	User    string        `mapstructure:"user"`    // simple auth user.name
	CAFile  string        `mapstructure:"ca_file"`
	Timeout time.Duration `mapstructure:"timeout"`
	Submit  SubmitMode    `mapstructure:"submit"` // rest|command
	Command CommandConfig `mapstructure:"command"`
	// TimelineURL is the Timeline Server (application history), asked
	// about an application the RM no longer knows before colocd decides
	// whether it may submit its job again. Empty: none.
	TimelineURL string `mapstructure:"timeline_url"`
	// MaxCompletedApps is the RM's yarn.resourcemanager.max-completed-applications:
	// while fewer applications have ended since the RM started, an
	// application id it issued and does not know was never submitted.
	// Never set it above the RM's value.
	MaxCompletedApps int `mapstructure:"max_completed_applications"`
	// NodesRefresh is how often the running nodes are read (GET
	// /ws/v1/cluster/nodes: a report per node, megabytes on a large
	// cluster); in between, a node's free room follows colocd's own
	// applications' allocations (Cluster.State). The nodes are read
	// sooner when the cluster metrics' node counts change. 0: on every
	// reading of the cluster.
	NodesRefresh time.Duration `mapstructure:"nodes_refresh"`
}

// SubmitMode is how jobs reach YARN.
type SubmitMode string

// Submit modes.
const (
	SubmitREST    SubmitMode = "rest"    // new-application + submit application context
	SubmitCommand SubmitMode = "command" // run a command with the job's tags
)

// CommandConfig is the command run per job in command submit mode; the
// job's submit.args are appended to Argv and its tags are passed in the
// environment variable COLOCD_YARN_TAGS.
type CommandConfig struct {
	Argv    []string      `mapstructure:"argv"`
	Timeout time.Duration `mapstructure:"timeout"`
}

// DefaultConfig is the section's defaults: REST submission, a 30 s
// timeout, Hadoop 3's max-completed-applications, the nodes read every
// DefaultNodesRefresh, no ResourceManager (which Validate requires).
func DefaultConfig() Config {
	return Config{
		RMURLs:           []string{},
		Timeout:          30 * time.Second,
		Submit:           SubmitREST,
		Command:          CommandConfig{Argv: []string{}, Timeout: 5 * time.Minute},
		MaxCompletedApps: 1000, // Hadoop 3's default (Hadoop 2: 10000)
		NodesRefresh:     DefaultNodesRefresh,
	}
}

// DefaultNodesRefresh is yarn.nodes_refresh's default: at 10,000 nodes the
// node list is 5.7 MB of JSON (the documented 3.x node report; a 3.3 RM
// writes more per node), read every 30 s instead of on every sync and
// admission pass; a node that joins, leaves or changes state is seen at
// once (the metrics' node counts), other tenants' changes to a node's free
// room within 30 s.
const DefaultNodesRefresh = 30 * time.Second

// FieldError names the key of the section that is wrong and why.
type FieldError struct {
	Field  string // e.g. "rm_urls[0]"
	Reason string
}

func (e *FieldError) Error() string { return "yarn: " + e.Field + ": " + e.Reason }

// FieldReason is the key under the section and the reason, for the
// config loader, which names the whole key.
func (e *FieldError) FieldReason() (field, reason string) { return e.Field, e.Reason }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Validate checks the section; errors are *FieldError.
func (y Config) Validate() error {
	if len(y.RMURLs) == 0 {
		return fieldErr("rm_urls", "must list at least one ResourceManager URL when backend is yarn")
	}
	for i, u := range y.RMURLs {
		if err := yarnclient.CheckURL(u); err != nil {
			return fieldErr(fmt.Sprintf("rm_urls[%d]", i), "%v", err)
		}
	}
	if y.Timeout <= 0 {
		return fieldErr("timeout", "must be > 0, got %v", y.Timeout)
	}
	if y.TimelineURL != "" {
		if err := yarnclient.CheckURL(y.TimelineURL); err != nil {
			return fieldErr("timeline_url", "%v", err)
		}
	}
	if y.NodesRefresh < 0 {
		return fieldErr("nodes_refresh", "must be >= 0 (0: read the nodes on every reading of the cluster), got %v", y.NodesRefresh)
	}
	if y.MaxCompletedApps < 0 {
		return fieldErr("max_completed_applications", "must be >= 0 (0: never assume the RM still holds an ended application), got %d", y.MaxCompletedApps)
	}
	switch y.Submit {
	case SubmitREST:
	case SubmitCommand:
		if len(y.Command.Argv) == 0 {
			return fieldErr("command.argv", "must not be empty when yarn.submit is command")
		}
		if y.Command.Timeout <= 0 {
			return fieldErr("command.timeout", "must be > 0, got %v", y.Command.Timeout)
		}
	default:
		return fieldErr("submit", "must be rest or command, got %q", y.Submit)
	}
	return nil
}

// ClientConfig is the yarnclient.Config of the section.
func (y Config) ClientConfig(log *slog.Logger) yarnclient.Config {
	return yarnclient.Config{RMURLs: y.RMURLs, User: y.User, CAFile: y.CAFile, Timeout: y.Timeout,
		TimelineURL: y.TimelineURL, Logger: log}
}
