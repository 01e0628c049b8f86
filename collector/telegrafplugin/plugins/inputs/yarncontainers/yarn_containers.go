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
	"slices"
	"strings"
	"time"

	"github.com/influxdata/telegraf"
	"github.com/influxdata/telegraf/config"
	"github.com/influxdata/telegraf/plugins/common/tls"
	"github.com/influxdata/telegraf/plugins/inputs"

	"github.com/colocd/colocd/yarnclient"
)

//go:embed sample.conf
var sampleConfig string

// Measurement is the name of the points this plugin emits.
const Measurement = "yarn_containers"

// Defaults.
const (
	DefaultNodeManagerURL = "http://127.0.0.1:8042"
	DefaultKindTagPrefix  = yarnclient.TagKindPrefix // what colocd tags its applications with
	DefaultTimeout        = 5 * time.Second
)

// maxBody bounds what is read from one REST response.
const maxBody = 32 << 20

// YarnContainers reads the local NodeManager's containers and emits, per
// application with live containers on this node, one yarn_containers point:
// tags application_id and kind (the colocd job kind from the application's
// tags, when known; Telegraf adds host), fields containers, memory_mb and
// vcores.
type YarnContainers struct {
	NodeManagerURL      string          `toml:"node_manager_url"`
	ResourceManagerURLs []string        `toml:"resource_manager_urls"`
	KindTagPrefix       string          `toml:"kind_tag_prefix"`
	UserName            string          `toml:"user_name"`
	Timeout             config.Duration `toml:"timeout"`
	tls.ClientConfig

	client *http.Client
	now    func() time.Time
	// kinds caches each application's kind ("" for none) while the
	// application has containers here; tags never change.
	kinds map[string]string
	// rm is the index of the ResourceManager that answered last.
	rm int
}

// New returns the plugin with its defaults, as Telegraf creates it.
func New() *YarnContainers {
	return &YarnContainers{
		NodeManagerURL: DefaultNodeManagerURL,
		KindTagPrefix:  DefaultKindTagPrefix,
		Timeout:        config.Duration(DefaultTimeout),
	}
}

func init() {
	inputs.Add(Measurement, func() telegraf.Input { return New() })
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
	if y.Timeout <= 0 {
		return fmt.Errorf("timeout must be positive, got %v", time.Duration(y.Timeout))
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
	y.kinds = map[string]string{}
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

type appTotals struct{ containers, memoryMB, vcores int64 }

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
	}
	// Forget applications that left this node.
	for app := range y.kinds {
		if apps[app] == nil {
			delete(y.kinds, app)
		}
	}
	ids := make([]string, 0, len(apps))
	for app := range apps {
		ids = append(ids, app)
	}
	slices.Sort(ids)
	for _, app := range ids {
		tags := map[string]string{"application_id": app}
		kind, err := y.kind(ctx, app)
		if err != nil {
			acc.AddError(err) // emit without a kind; ask again next time
		} else if kind != "" {
			tags["kind"] = kind
		}
		t := apps[app]
		acc.AddFields(Measurement, map[string]any{
			"containers": t.containers,
			"memory_mb":  t.memoryMB,
			"vcores":     t.vcores,
		}, tags, now)
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

// kind returns an application's colocd kind, "" when it has none.
func (y *YarnContainers) kind(ctx context.Context, app string) (string, error) {
	if k, ok := y.kinds[app]; ok {
		return k, nil
	}
	if len(y.ResourceManagerURLs) == 0 {
		return "", nil
	}
	var body struct {
		App struct {
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
			y.kinds[app] = "" // an application the RM does not know has no kind
			return "", nil
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		y.rm = n
		k := kindFromTags(body.App.ApplicationTags, y.KindTagPrefix)
		y.kinds[app] = k
		return k, nil
	}
	return "", fmt.Errorf("resource manager: tags of %s: %w", app, errors.Join(errs...))
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
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := y.client.Do(req)
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
