package yarnclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Lenient decoding. The RM writes most objects in Jersey's "natural" JSON
// notation (numbers as numbers, lists as arrays), but not all: the
// attempt-containers DAO and the app-state object go through Jersey's default
// "mapped" notation, where numbers are strings and a one-element list is a bare
// object; the 2.8 docs even show "unmanagedApplication":"false". The helpers
// here accept both spellings so that one decoder reads every documented
// variant, and fail with an error (never a panic) on anything else.

// oneOrMany decodes a JSON list that may also be a single object, null, or ""
// (how mapped notation writes an empty list).
type oneOrMany[T any] []T

func (l *oneOrMany[T]) UnmarshalJSON(b []byte) error {
	b = trimSpace(b)
	if len(b) == 0 || string(b) == "null" || string(b) == `""` {
		*l = nil
		return nil
	}
	if b[0] == '[' {
		var s []T
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = s
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*l = oneOrMany[T]{v}
	return nil
}

// flexInt decodes a number, a quoted number, "" or null.
type flexInt int64

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s, null, err := scalarText(b)
	if err != nil || null {
		*f = 0
		return err
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		*f = flexInt(i)
		return nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x > math.MaxInt64 || x < math.MinInt64 {
		return fmt.Errorf("not an integer: %q", truncate(s, 40))
	}
	*f = flexInt(x)
	return nil
}

// flexFloat decodes a number, a quoted number, "" or null. "NaN" and the
// infinities become 0 so that the value stays JSON-encodable.
type flexFloat float64

func (f *flexFloat) UnmarshalJSON(b []byte) error {
	s, null, err := scalarText(b)
	if err != nil || null {
		*f = 0
		return err
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("not a number: %q", truncate(s, 40))
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		x = 0
	}
	*f = flexFloat(x)
	return nil
}

// flexBool decodes true/false, "true"/"false", "" and null.
type flexBool bool

func (f *flexBool) UnmarshalJSON(b []byte) error {
	s, null, err := scalarText(b)
	if err != nil || null {
		*f = false
		return err
	}
	v, err := strconv.ParseBool(strings.ToLower(s))
	if err != nil {
		return fmt.Errorf("not a boolean: %q", truncate(s, 40))
	}
	*f = flexBool(v)
	return nil
}

// scalarText returns the text of a JSON scalar, unquoting strings. null and
// "" report null.
func scalarText(b []byte) (string, bool, error) {
	b = trimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return "", true, nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return "", false, err
		}
		s = strings.TrimSpace(s)
		return s, s == "", nil
	}
	if b[0] == '{' || b[0] == '[' {
		return "", false, errors.New("want a scalar, got an object or array")
	}
	return string(b), false, nil
}

// appWire decodes an App in one pass: the plain fields through appPlain
// (App without its methods), the fields whose spelling varies across
// versions through flexible types that shadow them. unmanagedApplication is
// a boolean or a string ("false" in the 2.8 docs), priority and progress
// numbers or strings.
type appPlain App

type appWire struct {
	appPlain
	Progress             flexFloat `json:"progress"`
	Priority             flexInt   `json:"priority"`
	ApplicationPriority  flexInt   `json:"applicationPriority"`
	UnmanagedApplication flexBool  `json:"unmanagedApplication"`
}

func (w *appWire) app() App {
	a := App(w.appPlain)
	a.Progress = float64(w.Progress)
	a.Priority = int(w.Priority)
	a.ApplicationPriority = int(w.ApplicationPriority)
	a.UnmanagedApplication = bool(w.UnmanagedApplication)
	return a
}

// UnmarshalJSON reads an app in any of the documented spellings.
func (a *App) UnmarshalJSON(b []byte) error {
	var w appWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*a = w.app()
	return nil
}

func appsOf(ws []appWire) []App {
	if ws == nil {
		return nil
	}
	out := make([]App, len(ws))
	for i := range ws {
		out[i] = ws[i].app()
	}
	return out
}

// UnmarshalJSON reads an attempt whose id and times may be numbers or strings.
func (a *AppAttempt) UnmarshalJSON(b []byte) error {
	type plain AppAttempt
	aux := struct {
		*plain
		ID           flexInt `json:"id"`
		StartTime    flexInt `json:"startTime"`
		FinishedTime flexInt `json:"finishedTime"`
	}{plain: (*plain)(a)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	a.ID = int(aux.ID)
	a.StartTime = int64(aux.StartTime)
	a.FinishedTime = int64(aux.FinishedTime)
	return nil
}

// UnmarshalJSON reads a container in natural or mapped notation.
func (c *Container) UnmarshalJSON(b []byte) error {
	type plain Container
	aux := struct {
		*plain
		AllocatedMB         flexInt         `json:"allocatedMB"`
		AllocatedVCores     flexInt         `json:"allocatedVCores"`
		Priority            flexInt         `json:"priority"`
		StartedTime         flexInt         `json:"startedTime"`
		FinishedTime        flexInt         `json:"finishedTime"`
		ElapsedTime         flexInt         `json:"elapsedTime"`
		ContainerExitStatus flexInt         `json:"containerExitStatus"`
		AllocatedResources  json.RawMessage `json:"allocatedResources"`
	}{plain: (*plain)(c)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	c.AllocatedMB = int64(aux.AllocatedMB)
	c.AllocatedVCores = int64(aux.AllocatedVCores)
	c.Priority = int(aux.Priority)
	c.StartedTime = int64(aux.StartedTime)
	c.FinishedTime = int64(aux.FinishedTime)
	c.ElapsedTime = int64(aux.ElapsedTime)
	c.ContainerExitStatus = int(aux.ContainerExitStatus)
	res, err := decodeResourceEntries(aux.AllocatedResources)
	if err != nil {
		return fmt.Errorf("allocatedResources: %w", err)
	}
	c.AllocatedResources = res
	return nil
}

// UnmarshalJSON reads an entry whose value may be a number or a string.
func (e *ResourceEntry) UnmarshalJSON(b []byte) error {
	var aux struct {
		Key   string  `json:"key"`
		Value flexInt `json:"value"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*e = ResourceEntry{Key: aux.Key, Value: int64(aux.Value)}
	return nil
}

// decodeResourceEntries accepts the documented array of {key,value}, the XML-ish
// {"entry":[...]} and a plain {"memory-mb":1536} map.
func decodeResourceEntries(b json.RawMessage) ([]ResourceEntry, error) {
	b = trimSpace(b)
	if len(b) == 0 || string(b) == "null" || string(b) == `""` {
		return nil, nil
	}
	if b[0] == '[' {
		var l []ResourceEntry
		err := json.Unmarshal(b, &l)
		return l, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, err
	}
	if e, ok := obj["entry"]; ok && len(obj) == 1 {
		var l oneOrMany[ResourceEntry]
		err := json.Unmarshal(e, &l)
		return l, err
	}
	if _, ok := obj["key"]; ok {
		var one ResourceEntry
		err := json.Unmarshal(b, &one)
		return []ResourceEntry{one}, err
	}
	out := make([]ResourceEntry, 0, len(obj))
	for k, v := range obj {
		var n flexInt
		if err := json.Unmarshal(v, &n); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out = append(out, ResourceEntry{Key: k, Value: int64(n)})
	}
	sortEntries(out)
	return out, nil
}

func sortEntries(l []ResourceEntry) {
	for i := 1; i < len(l); i++ {
		for j := i; j > 0 && l[j].Key < l[j-1].Key; j-- {
			l[j], l[j-1] = l[j-1], l[j]
		}
	}
}

// UnmarshalJSON reads a NodeManager container whose numbers may be strings.
func (c *NMContainer) UnmarshalJSON(b []byte) error {
	type plain NMContainer
	aux := struct {
		*plain
		ExitCode            flexInt           `json:"exitCode"`
		TotalMemoryNeededMB flexInt           `json:"totalMemoryNeededMB"`
		TotalVCoresNeeded   flexInt           `json:"totalVCoresNeeded"`
		ContainerLogFiles   oneOrMany[string] `json:"containerLogFiles"`
	}{plain: (*plain)(c)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	c.ExitCode = int(aux.ExitCode)
	c.TotalMemoryNeededMB = int64(aux.TotalMemoryNeededMB)
	c.TotalVCoresNeeded = int64(aux.TotalVCoresNeeded)
	c.ContainerLogFiles = []string(aux.ContainerLogFiles)
	return nil
}

// Envelope decoders: one per endpoint. Each returns a plain error that the
// caller wraps into a *decodeError with the HTTP status and a body snippet.

func decodeClusterInfo(b []byte) (ClusterInfo, error) {
	var env struct {
		ClusterInfo *ClusterInfo `json:"clusterInfo"`
	}
	if err := unmarshalObject(b, &env); err != nil {
		return ClusterInfo{}, err
	}
	if env.ClusterInfo == nil {
		return ClusterInfo{}, errors.New(`missing "clusterInfo" object`)
	}
	return *env.ClusterInfo, nil
}

func decodeClusterMetrics(b []byte) (ClusterMetrics, error) {
	var env struct {
		ClusterMetrics *ClusterMetrics `json:"clusterMetrics"`
	}
	if err := unmarshalObject(b, &env); err != nil {
		return ClusterMetrics{}, err
	}
	if env.ClusterMetrics == nil {
		return ClusterMetrics{}, errors.New(`missing "clusterMetrics" object`)
	}
	return *env.ClusterMetrics, nil
}

// Lists decode in one pass when they have the usual shape (an array); only
// when that fails on a type (a one-element list written as a bare object, ""
// for an empty list) does the tolerant, slower decoding run. That keeps a
// 2000-app list cheap.

func decodeNodes(b []byte) ([]Node, error) {
	var fast struct {
		Nodes *struct {
			Node []Node `json:"node"`
		} `json:"nodes"`
	}
	err := unmarshalObject(b, &fast)
	if err == nil && fast.Nodes != nil {
		return fast.Nodes.Node, nil
	}
	if err != nil && !isTypeError(err) {
		return nil, err
	}
	var env struct {
		Nodes *struct {
			Node oneOrMany[Node] `json:"node"`
		} `json:"nodes"`
	}
	if err := unmarshalObject(b, &env); err != nil {
		return nil, err
	}
	if !hasKey(b, "nodes") {
		return nil, errors.New(`missing "nodes" object`)
	}
	if env.Nodes == nil {
		return nil, nil
	}
	return env.Nodes.Node, nil
}

// decodeApps reads {"apps":{"app":[...]}}; YARN answers {"apps":null} when no
// app matches.
func decodeApps(b []byte) ([]App, error) {
	var fast struct {
		Apps *struct {
			App []appWire `json:"app"`
		} `json:"apps"`
	}
	err := unmarshalObject(b, &fast)
	if err == nil && fast.Apps != nil {
		return appsOf(fast.Apps.App), nil
	}
	if err != nil && !isTypeError(err) {
		return nil, err
	}
	var env struct {
		Apps *struct {
			App oneOrMany[appWire] `json:"app"`
		} `json:"apps"`
	}
	if err := unmarshalObject(b, &env); err != nil {
		return nil, err
	}
	if !hasKey(b, "apps") {
		return nil, errors.New(`missing "apps" object`)
	}
	if env.Apps == nil {
		return nil, nil
	}
	return appsOf(env.Apps.App), nil
}

func isTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

func decodeApp(b []byte) (App, error) {
	var env struct {
		App *appWire `json:"app"`
	}
	if err := unmarshalObject(b, &env); err != nil {
		return App{}, err
	}
	if env.App == nil {
		return App{}, errors.New(`missing "app" object`)
	}
	if env.App.ID == "" {
		return App{}, errors.New(`"app" has no "id"`)
	}
	return env.App.app(), nil
}

// decodeAppState reads the documented {"state":"..."} and also the wrapped
// {"appstate":{"state":"..."}} form a root-wrapping serializer would write.
func decodeAppState(b []byte) (string, error) {
	var env struct {
		State    *string `json:"state"`
		AppState *struct {
			State string `json:"state"`
		} `json:"appstate"`
	}
	if err := unmarshalObject(b, &env); err != nil {
		return "", err
	}
	switch {
	case env.State != nil && *env.State != "":
		return *env.State, nil
	case env.AppState != nil && env.AppState.State != "":
		return env.AppState.State, nil
	}
	return "", errors.New(`missing "state"`)
}

func decodeAppAttempts(b []byte) ([]AppAttempt, error) {
	var env struct {
		AppAttempts *struct {
			AppAttempt oneOrMany[AppAttempt] `json:"appAttempt"`
		} `json:"appAttempts"`
	}
	if err := unmarshalObject(b, &env); err != nil {
		return nil, err
	}
	if !hasKey(b, "appAttempts") {
		return nil, errors.New(`missing "appAttempts" object`)
	}
	if env.AppAttempts == nil {
		return nil, nil
	}
	return env.AppAttempts.AppAttempt, nil
}

// decodeContainers reads the RM attempt-containers answer: the documented
// {"containers":{"container":[...]}} and the root-unwrapped {"container":[...]}
// that Jersey's default configuration writes (as the timeline server's
// documented example of the same DAO shows).
func decodeContainers(b []byte) ([]Container, error) {
	var env struct {
		Containers *struct {
			Container oneOrMany[Container] `json:"container"`
		} `json:"containers"`
		Container oneOrMany[Container] `json:"container"`
	}
	if err := unmarshalObject(b, &env); err != nil {
		return nil, err
	}
	switch {
	case env.Containers != nil:
		return env.Containers.Container, nil
	case hasKey(b, "container"), hasKey(b, "containers"):
		return env.Container, nil
	}
	return nil, errors.New(`missing "containers" object`)
}

// decodeNMContainers reads a NodeManager's {"containers":{"container":[...]}};
// an idle node answers {"containers":{}} or {"containers":null}.
func decodeNMContainers(b []byte) ([]NMContainer, error) {
	var env struct {
		Containers *struct {
			Container oneOrMany[NMContainer] `json:"container"`
		} `json:"containers"`
	}
	if err := unmarshalObject(b, &env); err != nil {
		return nil, err
	}
	if !hasKey(b, "containers") {
		return nil, errors.New(`missing "containers" object`)
	}
	if env.Containers == nil {
		return nil, nil
	}
	return env.Containers.Container, nil
}

func decodeNewApplication(b []byte) (NewApplication, error) {
	var na NewApplication
	if err := unmarshalObject(b, &na); err != nil {
		return NewApplication{}, err
	}
	if na.ApplicationID == "" {
		return NewApplication{}, errors.New(`missing "application-id"`)
	}
	return na, nil
}

// decodeRemoteException reads {"RemoteException":{...}}; ok is false when the
// body is not one.
func decodeRemoteException(b []byte) (exception, javaClassName, message string, ok bool) {
	var env struct {
		RemoteException *struct {
			Exception     string `json:"exception"`
			Message       string `json:"message"`
			JavaClassName string `json:"javaClassName"`
		} `json:"RemoteException"`
	}
	if json.Unmarshal(b, &env) != nil || env.RemoteException == nil {
		return "", "", "", false
	}
	r := env.RemoteException
	return r.Exception, r.JavaClassName, r.Message, true
}

// unmarshalObject decodes a JSON object into v; json.Unmarshal also rejects
// trailing data.
func unmarshalObject(b []byte, v any) error {
	t := trimSpace(b)
	if len(t) == 0 {
		return errors.New("empty body")
	}
	if t[0] != '{' {
		return fmt.Errorf("want a JSON object, body starts with %q", truncate(string(t), 16))
	}
	return json.Unmarshal(t, v)
}

// hasKey reports whether the top-level object of b has key (exact or
// case-insensitive, like encoding/json's field matching).
func hasKey(b []byte, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	for k := range m {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

func trimSpace(b []byte) []byte { return bytes.TrimSpace(b) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
