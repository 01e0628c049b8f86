package yarncluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/yarnclient"
)

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
	if sc.Queue != "" && !sameQueue(sc.Queue, j.Queue) {
		return refusedField("submit.queue", "%q differs from the job's queue %q: a job runs in one queue, the one colocd accounts it to; "+
			"set queue (submit.queue is filled from it), or both to the same queue", sc.Queue, j.Queue)
	}
	return nil
}

// sameQueue reports whether two queue names name one YARN queue: equal,
// or equal but for a leading "root." (both schedulers take a queue by its
// path from root and the Capacity Scheduler by its leaf name too, so
// "root.default" and "default" are one queue; "root.a.b" and "b" are not
// compared, as a leaf name need not be unique to the Fair Scheduler).
func sameQueue(a, b string) bool {
	return a == b || strings.TrimPrefix(a, "root.") == strings.TrimPrefix(b, "root.")
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
