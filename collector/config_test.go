package collector_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/colocd/colocd/collector"
	"github.com/google/go-cmp/cmp"
)

func TestConfigValidate(t *testing.T) {
	ok := collector.DefaultConfig()
	for name, tc := range map[string]struct {
		mod   func(*collector.Config)
		field string // "" = valid
	}{
		"default":                    {func(*collector.Config) {}, ""},
		"zero schema defaults":       {func(c *collector.Config) { c.Schema = collector.Schema{} }, ""},
		"influxdb 2":                 {func(c *collector.Config) { c.Org, c.Bucket, c.Token = "acme", "telegraf", "tok" }, ""},
		"https with path":            {func(c *collector.Config) { c.URL = "https://influx.example:8086/prefix/" }, ""},
		"http client":                {func(c *collector.Config) { c.HTTPClient = &http.Client{} }, ""},
		"empty url":                  {func(c *collector.Config) { c.URL = "" }, "url"},
		"bad url":                    {func(c *collector.Config) { c.URL = "http://[::1" }, "url"},
		"ftp url":                    {func(c *collector.Config) { c.URL = "ftp://x" }, "url"},
		"url without host":           {func(c *collector.Config) { c.URL = "http:///x" }, "url"},
		"url with query":             {func(c *collector.Config) { c.URL = "http://x/?db=telegraf" }, "url"},
		"empty bucket":               {func(c *collector.Config) { c.Bucket = "" }, "bucket"},
		"control in bucket":          {func(c *collector.Config) { c.Bucket = "a\nb" }, "bucket"},
		"bad utf8 org":               {func(c *collector.Config) { c.Org = "\xff" }, "org"},
		"zero timeout":               {func(c *collector.Config) { c.Timeout = 0 }, "timeout"},
		"negative host max":          {func(c *collector.Config) { c.HostPatternMax = -1 }, "host_pattern_max"},
		"negative stale":             {func(c *collector.Config) { c.StaleAfter = -time.Second }, "stale_after"},
		"empty host tag":             {func(c *collector.Config) { c.Schema.HostTag = "" }, "schema.host_tag"},
		"empty cpu total":            {func(c *collector.Config) { c.Schema.CPUTotal = "" }, "schema.cpu_total"},
		"empty net field":            {func(c *collector.Config) { c.Schema.NetSentField = "" }, "schema.net_sent_field"},
		"empty kind tag":             {func(c *collector.Config) { c.Schema.ContainersKindTag = "" }, "schema.containers_kind_tag"},
		"reserved host tag":          {func(c *collector.Config) { c.Schema.HostTag = "_field" }, "schema.host_tag"},
		"reserved result tag":        {func(c *collector.Config) { c.Schema.DiskNameTag = "result" }, "schema.disk_name_tag"},
		"bad disk regex":             {func(c *collector.Config) { c.Schema.DiskExclude = []string{"sd[a-z]+", "("} }, "schema.disk_exclude[1]"},
		"empty net include":          {func(c *collector.Config) { c.Schema.NetInclude = []string{""} }, "schema.net_include[0]"},
		"bad net exclude":            {func(c *collector.Config) { c.Schema.NetExclude = []string{"a**"} }, "schema.net_exclude[0]"},
		"same measurement and field": {func(c *collector.Config) { c.Schema.NetMeasurement, c.Schema.NetRecvField = "diskio", "write_bytes" }, "schema.net_recv_field"},
		"no exclusions":              {func(c *collector.Config) { c.Schema.DiskExclude, c.Schema.NetExclude = nil, nil }, ""},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := ok
			cfg.Schema = collector.DefaultSchema()
			tc.mod(&cfg)
			err := cfg.Validate()
			_, newErr := collector.New(cfg)
			if (err == nil) != (newErr == nil) {
				t.Fatalf("Validate() = %v but New() = %v", err, newErr)
			}
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var fe *collector.FieldError
			if !errors.As(err, &fe) || !errors.Is(err, collector.ErrInvalid) {
				t.Fatalf("Validate() = %v, want a *FieldError wrapping ErrInvalid", err)
			}
			if diff := cmp.Diff(tc.field, fe.Field); diff != "" {
				t.Errorf("FieldError.Field (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUsageArguments(t *testing.T) {
	c, err := collector.New(collector.DefaultConfig()) // never contacted
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		hosts    []string
		from, to time.Time
		field    string
	}{
		"empty window":    {[]string{"a"}, now, now, "window"},
		"reversed window": {[]string{"a"}, now, now.Add(-time.Second), "window"},
		"before 1678":     {[]string{"a"}, time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), now, "window"},
		"after 2261":      {[]string{"a"}, now, time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), "window"},
		"empty host":      {[]string{"a", ""}, now, now.Add(time.Minute), "hosts[1]"},
		"invalid utf8":    {[]string{"\xfe"}, now, now.Add(time.Minute), "hosts[0]"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.Usage(t.Context(), tc.hosts, tc.from, tc.to)
			var fe *collector.FieldError
			if !errors.As(err, &fe) || !errors.Is(err, collector.ErrInvalid) {
				t.Fatalf("Usage error = %v, want a *FieldError", err)
			}
			if fe.Field != tc.field {
				t.Errorf("Field = %q, want %q", fe.Field, tc.field)
			}
		})
	}
	if _, err := c.Colocations(t.Context(), now, now); !errors.Is(err, collector.ErrInvalid) {
		t.Errorf("Colocations on an empty window: %v, want ErrInvalid", err)
	}
}
