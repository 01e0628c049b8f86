package yarncontainers

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/influxdata/telegraf"
	"github.com/influxdata/telegraf/config"
	"github.com/influxdata/telegraf/plugins/common/tls"
	"github.com/influxdata/telegraf/plugins/inputs"

	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/kerberos"
)

//go:embed sample.conf
var sampleConfig string

// measurement is the name of the points this plugin emits.
const measurement = "yarn_containers"

// Defaults.
const (
	defaultNodeManagerURL = "http://127.0.0.1:8042"
	defaultKindTagPrefix  = yarnclient.TagKindPrefix // what colocd tags its applications with
	defaultTimeout        = 5 * time.Second
)

// The values of application_name: whether each point carries the
// application's name.
const (
	// nameNone: no name (the default): names are unbounded, so they are
	// never a tag, and nothing is stored unless asked for.
	nameNone = "none"
	// nameField: the name as the string field application_name (fields are
	// not indexed, so it adds no series), for colocd's
	// learning.foreign.names patterns.
	nameField = "field"
)

// The tags and fields a point carries besides host (Telegraf's).
const (
	tagApplicationID   = "application_id"
	tagKind            = "kind"
	tagApplicationType = "application_type"
	tagQueue           = "queue"
	fieldContainers    = "containers"
	fieldMemoryMB      = "memory_mb"
	fieldVCores        = "vcores"
	fieldName          = "application_name"
)

// maxBody bounds what is read from one REST response.
const maxBody = 32 << 20

// YarnContainers reads the local NodeManager's containers and emits, per
// application with live containers on this node, one yarn_containers point:
// tags application_id, kind (the colocd job kind from the application's
// tags, when known), application_type and queue (as the ResourceManager
// reports them; Telegraf adds host), fields containers, memory_mb and
// vcores, and with ApplicationName nameField the string field
// application_name. With CgroupDir set, each point whose application has
// a container with a readable cgroup also carries the integer fields
// cpu_usage_us, io_read_bytes and io_write_bytes (the application's
// containers' cgroup v2 counters, monotone per application while the
// plugin runs; the I/O ones only while every container read had an
// io.stat) and host_cpus.
type YarnContainers struct {
	NodeManagerURL      string          `toml:"node_manager_url"`
	ResourceManagerURLs []string        `toml:"resource_manager_urls"`
	KindTagPrefix       string          `toml:"kind_tag_prefix"`
	ApplicationName     string          `toml:"application_name"`
	UserName            string          `toml:"user_name"`
	Timeout             config.Duration `toml:"timeout"`
	// CgroupDir is the cgroup v2 directory holding one directory per
	// container, named by its id: Hadoop's
	// yarn.nodemanager.linux-container-executor.cgroups.mount-path joined
	// with ...cgroups.hierarchy. Empty: no cgroup fields.
	CgroupDir string `toml:"cgroup_dir"`
	tls.ClientConfig
	// Kerberos (SPNEGO) towards kerberized NodeManagers and
	// ResourceManagers, instead of user_name: a principal and its keytab
	// (both), krb5.conf, and the servers' HTTP service principal (Hadoop's
	// "HTTP/_HOST@REALM", _HOST replaced by each URL's host), with
	// per-server overrides by "host:port" or "host" for a server reached
	// by an address its principal does not name (the default
	// node_manager_url's 127.0.0.1).
	KerberosPrincipal         string            `toml:"kerberos_principal"`
	KerberosKeytab            string            `toml:"kerberos_keytab"`
	KerberosKrb5Conf          string            `toml:"kerberos_krb5_conf"`
	KerberosServicePrincipal  string            `toml:"kerberos_service_principal"`
	KerberosServicePrincipals map[string]string `toml:"kerberos_service_principals"`

	client *http.Client
	auth   *kerberos.Auth // nil: simple auth (user_name)

	now func() time.Time
	// apps caches what the ResourceManager said of each application (the
	// zero appInfo for one it does not know) while the application has
	// containers here: one lookup per application and node.
	apps map[string]appInfo
	// rm is the index of the ResourceManager that answered last.
	rm int
	// cgroups holds, with CgroupDir set, each application's containers'
	// counters while it has live containers here.
	cgroups map[string]*appCgroups
	// cpuOnline is the kernel's list of online CPUs (defaultCPUOnline).
	cpuOnline string
	// warnedNoIO: a container without io.stat was logged (warnNoIO).
	warnedNoIO bool

	Log telegraf.Logger `toml:"-"`
}

// appInfo is what the points carry of an application besides its id.
// Tags, type and name never change while it runs; its queue changes only
// when an administrator moves it (yarn application -movetoqueue), which
// its points here do not follow.
type appInfo struct{ kind, typ, queue, name string }

// newYarnContainers returns the plugin with its defaults, as Telegraf creates it.
func newYarnContainers() *YarnContainers {
	return &YarnContainers{
		NodeManagerURL:  defaultNodeManagerURL,
		KindTagPrefix:   defaultKindTagPrefix,
		ApplicationName: nameNone,
		Timeout:         config.Duration(defaultTimeout),
	}
}

func init() {
	inputs.Add(measurement, func() telegraf.Input { return newYarnContainers() })
}

// SampleConfig returns the plugin's sample configuration.
func (*YarnContainers) SampleConfig() string { return sampleConfig }

// Init validates the configuration and builds the HTTP client. It does
// not connect.
func (y *YarnContainers) Init() error {
	if err := checkURL("node_manager_url", y.NodeManagerURL); err != nil {
		return err
	}
	for i, u := range y.ResourceManagerURLs {
		if err := checkURL(fmt.Sprintf("resource_manager_urls[%d]", i), u); err != nil {
			return err
		}
	}
	if y.KindTagPrefix == "" {
		return errors.New("kind_tag_prefix must not be empty")
	}
	switch y.ApplicationName {
	case "":
		y.ApplicationName = nameNone
	case nameNone, nameField:
	default:
		return fmt.Errorf("application_name must be %q or %q, got %q", nameNone, nameField, y.ApplicationName)
	}
	if y.Timeout <= 0 {
		return fmt.Errorf("timeout must be positive, got %v", time.Duration(y.Timeout))
	}
	if y.CgroupDir != "" {
		// The directory itself may not exist yet: the NodeManager makes it.
		if !filepath.IsAbs(y.CgroupDir) {
			return fmt.Errorf("cgroup_dir %q must be an absolute path", y.CgroupDir)
		}
		y.CgroupDir = filepath.Clean(y.CgroupDir)
	}
	if err := y.initKerberos(); err != nil {
		return err
	}
	tlsCfg, err := y.ClientConfig.TLSConfig()
	if err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsCfg
	y.client = &http.Client{Transport: tr, Timeout: time.Duration(y.Timeout)}
	if y.now == nil {
		y.now = time.Now
	}
	y.apps = map[string]appInfo{}
	y.cgroups = map[string]*appCgroups{}
	if y.cpuOnline == "" {
		y.cpuOnline = defaultCPUOnline
	}
	return nil
}

// initKerberos builds the SPNEGO authenticator when kerberos_principal
// or kerberos_keytab is set: it reads the keytab and krb5.conf here (no
// KDC is asked before the first gather).
func (y *YarnContainers) initKerberos() error {
	if y.KerberosPrincipal == "" && y.KerberosKeytab == "" {
		return nil
	}
	switch {
	case y.KerberosPrincipal == "" || y.KerberosKeytab == "":
		return errors.New("kerberos_principal and kerberos_keytab: set both for Kerberos, or neither")
	case y.UserName != "":
		return errors.New("user_name and kerberos_principal: set one (user_name is simple authentication)")
	}
	a, err := kerberos.New(kerberos.Config{Principal: y.KerberosPrincipal, Keytab: y.KerberosKeytab, Krb5Conf: y.KerberosKrb5Conf,
		ServicePrincipal: y.KerberosServicePrincipal, ServicePrincipals: y.KerberosServicePrincipals})
	if err != nil {
		return fmt.Errorf("kerberos: %w", err)
	}
	y.auth = a
	return nil
}

func checkURL(field, raw string) error {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return fmt.Errorf("%s must not be empty", field)
	case err != nil:
		return fmt.Errorf("%s %q does not parse: %w", field, raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%s %q: scheme must be http or https", field, raw)
	case u.Host == "":
		return fmt.Errorf("%s %q has no host", field, raw)
	}
	return nil
}

// holdsResources reports whether a container still occupies the node. It
// differs from NMContainer.Live in one state: a KILLING container counts,
// since it holds its resources until the NodeManager has cleaned it up.
func holdsResources(c yarnclient.NMContainer) bool {
	return c.Live() || strings.EqualFold(c.State, "KILLING")
}

type appTotals struct {
	containers, memoryMB, vcores int64
	ids                          []string // the live containers' ids
}

// Gather emits one point per application with live containers here.
func (y *YarnContainers) Gather(acc telegraf.Accumulator) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Duration(y.Timeout))
	defer cancel()
	now := y.now()
	containers, err := y.containers(ctx)
	if err != nil {
		return err
	}
	apps := map[string]*appTotals{}
	for _, c := range containers {
		if !holdsResources(c) {
			continue
		}
		app, ok := yarnclient.AppIDFromContainerID(c.ID)
		if !ok {
			acc.AddError(fmt.Errorf("container id %q: not container_<cluster>_<app>_<attempt>_<seq>", c.ID))
			continue
		}
		t := apps[app]
		if t == nil {
			t = &appTotals{}
			apps[app] = t
		}
		t.containers++
		t.memoryMB += c.TotalMemoryNeededMB
		t.vcores += c.TotalVCoresNeeded
		t.ids = append(t.ids, c.ID)
	}
	// Forget applications that left this node.
	for app := range y.apps {
		if apps[app] == nil {
			delete(y.apps, app)
		}
	}
	for app := range y.cgroups {
		if apps[app] == nil {
			delete(y.cgroups, app)
		}
	}
	var hostCPUs int64
	if y.CgroupDir != "" {
		hostCPUs = y.hostCPUs()
	}
	ids := make([]string, 0, len(apps))
	for app := range apps {
		ids = append(ids, app)
	}
	slices.Sort(ids)
	for _, app := range ids {
		info, err := y.info(ctx, app)
		if err != nil {
			acc.AddError(err) // emit with the id alone; ask again next time
		}
		tags := map[string]string{tagApplicationID: app}
		for k, v := range map[string]string{tagKind: info.kind, tagApplicationType: info.typ, tagQueue: info.queue} {
			if v != "" {
				tags[k] = v
			}
		}
		t := apps[app]
		fields := map[string]any{fieldContainers: t.containers, fieldMemoryMB: t.memoryMB, fieldVCores: t.vcores}
		if y.ApplicationName == nameField && info.name != "" {
			fields[fieldName] = info.name
		}
		if y.CgroupDir != "" {
			if u, ok := y.cgroupUsage(acc, app, t.ids); ok {
				fields[fieldCPUUsageUS], fields[fieldHostCPUs] = u.cpuUS, hostCPUs
				if u.io {
					fields[fieldIOReadBytes], fields[fieldIOWriteBytes] = u.readBytes, u.writeBytes
				}
			}
		}
		acc.AddFields(measurement, fields, tags, now)
	}
	return nil
}

// containers reads the NodeManager's container list.
func (y *YarnContainers) containers(ctx context.Context) ([]yarnclient.NMContainer, error) {
	var cs []yarnclient.NMContainer
	err := y.get(ctx, y.NodeManagerURL, yarnclient.PathNMContainers, func(b []byte) (err error) {
		cs, err = yarnclient.DecodeNMContainers(b)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("node manager: %w", err)
	}
	return cs, nil
}

// errNotFound marks a 404 from the ResourceManager.
var errNotFound = errors.New("not found")

// info returns what the ResourceManager says of an application: its
// colocd kind ("" when it has none), type, queue and name; the zero
// appInfo when no ResourceManager is configured or it does not know the
// application. A failed lookup is not cached: the next gather asks again.
func (y *YarnContainers) info(ctx context.Context, app string) (appInfo, error) {
	if info, ok := y.apps[app]; ok {
		return info, nil
	}
	if len(y.ResourceManagerURLs) == 0 {
		return appInfo{}, nil
	}
	var body struct {
		App struct {
			Name            string `json:"name"`
			Queue           string `json:"queue"`
			ApplicationType string `json:"applicationType"`
			ApplicationTags string `json:"applicationTags"`
		} `json:"app"`
	}
	var errs []error
	for i := range y.ResourceManagerURLs {
		n := (y.rm + i) % len(y.ResourceManagerURLs)
		err := y.get(ctx, y.ResourceManagerURLs[n], yarnclient.PathApp(url.PathEscape(app)), func(b []byte) error {
			return json.Unmarshal(b, &body)
		})
		if errors.Is(err, errNotFound) {
			// The RM does not know it: nothing to say, nor to ask again
			// while it stays.
			y.apps[app] = appInfo{}
			return appInfo{}, nil
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		y.rm = n
		a := body.App
		info := appInfo{kind: kindFromTags(a.ApplicationTags, y.KindTagPrefix), typ: strings.TrimSpace(a.ApplicationType),
			queue: strings.TrimSpace(a.Queue), name: a.Name}
		y.apps[app] = info
		return info, nil
	}
	return appInfo{}, fmt.Errorf("resource manager: application %s: %w", app, errors.Join(errs...))
}

// kindFromTags finds the first tag with the prefix in YARN's
// comma-separated applicationTags.
func kindFromTags(tags, prefix string) string {
	for _, tag := range strings.Split(tags, ",") {
		tag = strings.TrimSpace(tag)
		if k, ok := strings.CutPrefix(tag, prefix); ok && k != "" {
			return k
		}
	}
	return ""
}

// do sends a GET of u, with a SPNEGO token under Kerberos; a 401 that
// asks for Negotiate drops the cached service ticket and is tried once
// more (the server's key may have changed).
func (y *YarnContainers) do(ctx context.Context, u *url.URL) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		if y.auth != nil {
			if err := y.auth.Authenticate(req); err != nil {
				return nil, fmt.Errorf("GET %s: kerberos: %w", u.Redacted(), err)
			}
		}
		resp, err := y.client.Do(req)
		if err != nil || y.auth == nil || attempt > 0 || resp.StatusCode != http.StatusUnauthorized ||
			!strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Negotiate") || y.auth.Refresh(u) == "" {
			return resp, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
		resp.Body.Close()
	}
}

// get fetches base+path and hands the body of a 200 answer to decode.
func (y *YarnContainers) get(ctx context.Context, base, path string, decode func([]byte) error) error {
	u, err := url.Parse(strings.TrimRight(base, "/") + path)
	if err != nil {
		return err
	}
	if y.UserName != "" {
		q := u.Query()
		q.Set("user.name", y.UserName)
		u.RawQuery = q.Encode()
	}
	resp, err := y.do(ctx, u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("read %s: %w", u.Redacted(), err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("GET %s: %w", u.Redacted(), errNotFound)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("GET %s: %s: %s", u.Redacted(), resp.Status, bytes.TrimSpace(b[:min(len(b), 512)]))
	}
	if err := decode(b); err != nil {
		return fmt.Errorf("GET %s: decode: %w", u.Redacted(), err)
	}
	return nil
}
