package daemon

import (
	"net/http"
	"os"
	"sync/atomic"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/telemetry"
)

// tlsClientKeys are an outbound connection's TLS settings, named as in
// Prometheus's tls_config.
type tlsClientKeys struct {
	CAFile             string `mapstructure:"ca_file"`   // PEM bundle of the CAs to trust; "": the system's
	CertFile           string `mapstructure:"cert_file"` // client certificate (with key_file)
	KeyFile            string `mapstructure:"key_file"`
	ServerName         string `mapstructure:"server_name"`          // SNI and the name verified; "": the URL's host
	InsecureSkipVerify bool   `mapstructure:"insecure_skip_verify"` // never in production
}

// basicAuthKeys is HTTP basic authentication, as Prometheus's basic_auth.
type basicAuthKeys struct {
	Username     string `mapstructure:"username"`
	Password     string `mapstructure:"password"`
	PasswordFile string `mapstructure:"password_file"` // read at each request: rotate it without a restart
}

// prometheusSection is the config file's prometheus section: the reader's
// settings (collector.PrometheusConfig) and how colocd connects, in the
// shape of Prometheus's HTTPClientConfig (prometheus/common/config, which
// builds the client): basic auth, a bearer token or its file, TLS with a
// client certificate, extra headers (X-Scope-OrgID for Mimir, Cortex or
// Thanos tenants).
type prometheusSection struct {
	collector.PrometheusConfig `mapstructure:",squash"`
	BearerTokenFile            string            `mapstructure:"bearer_token_file"` // read at each request
	BasicAuth                  basicAuthKeys     `mapstructure:"basic_auth"`
	TLS                        tlsClientKeys     `mapstructure:"tls_config"`
	Headers                    map[string]string `mapstructure:"http_headers"`
}

// influxSection is the config file's influx section: the reader's settings
// (collector.Config; the token authenticates) and its TLS and headers.
type influxSection struct {
	collector.Config `mapstructure:",squash"`
	TLS              tlsClientKeys     `mapstructure:"tls_config"`
	Headers          map[string]string `mapstructure:"http_headers"`
}

// tlsConfig is k in prometheus/common's shape.
func (k tlsClientKeys) tlsConfig() promconfig.TLSConfig {
	return promconfig.TLSConfig{CAFile: k.CAFile, CertFile: k.CertFile, KeyFile: k.KeyFile, ServerName: k.ServerName,
		InsecureSkipVerify: k.InsecureSkipVerify, MinVersion: promconfig.TLSVersion(0x0303)}
}

func headers(h map[string]string) *promconfig.Headers {
	if len(h) == 0 {
		return nil
	}
	out := &promconfig.Headers{Headers: map[string]promconfig.Header{}}
	for k, v := range h {
		out.Headers[k] = promconfig.Header{Values: []string{v}}
	}
	return out
}

// httpClientConfig is the section's connection settings in
// prometheus/common's shape. The reader's own ca_file and bearer_token
// are moved into it (the reader then gets a client, and sets neither).
func (p prometheusSection) httpClientConfig() (promconfig.HTTPClientConfig, error) {
	hc := promconfig.HTTPClientConfig{TLSConfig: p.TLS.tlsConfig(), HTTPHeaders: headers(p.Headers), FollowRedirects: true, EnableHTTP2: true}
	if p.CAFile != "" {
		if p.TLS.CAFile != "" {
			return hc, cfgErr("prometheus.ca_file", "is set together with prometheus.tls_config.ca_file: set one")
		}
		hc.TLSConfig.CAFile = p.CAFile
	}
	set := 0
	if p.BearerToken != "" {
		hc.Authorization, set = &promconfig.Authorization{Type: "Bearer", Credentials: promconfig.Secret(p.BearerToken)}, set+1
	}
	if p.BearerTokenFile != "" {
		hc.Authorization, set = &promconfig.Authorization{Type: "Bearer", CredentialsFile: p.BearerTokenFile}, set+1
	}
	if b := p.BasicAuth; b != (basicAuthKeys{}) {
		if b.Username == "" {
			return hc, cfgErr("prometheus.basic_auth.username", "is empty while basic_auth is set")
		}
		if b.Password != "" && b.PasswordFile != "" {
			return hc, cfgErr("prometheus.basic_auth.password_file", "is set together with basic_auth.password: set one")
		}
		hc.BasicAuth, set = &promconfig.BasicAuth{Username: b.Username, Password: promconfig.Secret(b.Password), PasswordFile: b.PasswordFile}, set+1
	}
	if set > 1 {
		return hc, cfgErr("prometheus.bearer_token", "set one of bearer_token, bearer_token_file and basic_auth")
	}
	return hc, hc.Validate()
}

// httpClientConfig is the influx section's TLS and headers.
func (s influxSection) httpClientConfig() promconfig.HTTPClientConfig {
	return promconfig.HTTPClientConfig{TLSConfig: s.TLS.tlsConfig(), HTTPHeaders: headers(s.Headers), FollowRedirects: true, EnableHTTP2: true}
}

// outboundClient builds the client of section from hc
// (promconfig.NewClientFromConfig: certificate files and secret files are
// read again when they change), its requests timed under service. Its
// files are checked now, so that a missing certificate is a configuration
// error at start, naming the key.
func outboundClient(section string, hc promconfig.HTTPClientConfig, service string, obs *outboundMetrics) (*http.Client, error) {
	for _, f := range []struct{ key, path string }{{"tls_config.ca_file", hc.TLSConfig.CAFile},
		{"tls_config.cert_file", hc.TLSConfig.CertFile}, {"tls_config.key_file", hc.TLSConfig.KeyFile}} {
		if f.path != "" {
			if _, err := readable(f.path); err != nil {
				return nil, cfgErr(section+"."+f.key, "%v", err)
			}
		}
	}
	c, err := promconfig.NewClientFromConfig(hc, "colocd", promconfig.WithUserAgent("colocd"))
	if err != nil {
		return nil, cfgErr(section+".tls_config", "%v", err)
	}
	c.Transport = obs.wrap(service, c.Transport)
	return c, nil
}

// readable reports whether path can be opened for reading.
func readable(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	return true, f.Close()
}

// outboundMetrics times outbound requests into
// colocd_outbound_request_duration_seconds once the daemon's metrics
// exist (the backends are opened before them).
type outboundMetrics struct {
	m atomic.Pointer[telemetry.Metrics]
}

// set makes later requests count in m.
func (o *outboundMetrics) set(m *telemetry.Metrics) {
	if o != nil {
		o.m.Store(m)
	}
}

// wrap times rt's requests under service; a nil o leaves rt alone.
func (o *outboundMetrics) wrap(service string, rt http.RoundTripper) http.RoundTripper {
	if o == nil {
		return rt
	}
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &timedTransport{rt: rt, service: service, o: o}
}

type timedTransport struct {
	rt      http.RoundTripper
	service string
	o       *outboundMetrics
}

func (t *timedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	res, err := t.rt.RoundTrip(r)
	if m := t.o.m.Load(); m != nil {
		status := 0
		if err == nil {
			status = res.StatusCode
		}
		m.ObserveOutbound(t.service, r.URL.Path, status, time.Since(start))
	}
	return res, err
}

// CloseIdleConnections passes on to the wrapped transport (http.Client's
// CloseIdleConnections asks the transport).
func (t *timedTransport) CloseIdleConnections() {
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
