package daemon

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/colocd/colocd/daemon/api"
)

// served is what a reload (SIGHUP, the unit's ExecReload) replaces while
// the daemon serves, each swapped whole so that a request sees the old
// or the new one and never half of each: the API's handler (with its
// tokens, ACLs, groups, proxy rules and keytab) and the TLS configuration
// (the certificate and key, the client CAs). Connections already open
// keep the handshake they made.
type served struct {
	handler atomic.Pointer[http.Handler]
	api     atomic.Pointer[http.Handler] // api.New's handler within handler (the base of the next reload)
	tls     atomic.Pointer[tls.Config]   // nil: plain HTTP
	fresh   *freshConns                  // connections before their first request
}

// ServeHTTP serves r with the current handler.
func (s *served) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.handler.Load()).ServeHTTP(w, r)
}

// serverTLS is the http.Server's TLS configuration: each handshake takes
// the current one.
func (s *served) serverTLS() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return s.tls.Load(), nil
		},
		// ServeTLS wants a certificate source on the config it is given.
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return &s.tls.Load().Certificates[0], nil
		},
	}
}

// loadServerTLS reads tls.cert_file and key_file, and the client CAs of
// tls.client_auth; nil without a certificate.
func loadServerTLS(c tlsConfig) (*tls.Config, error) {
	if c.CertFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, cfgErr("tls.cert_file", "load the certificate and key: %v", err)
	}
	t := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if err := clientCerts(c, t); err != nil {
		return nil, err
	}
	return t, nil
}

// reloadedConfig is running with the keys a reload applies taken from
// next: log_level, tokens and token_file, tls.* (while TLS stays on, or
// off: turning it on or off needs a restart, as the listener serves one
// or the other), and the API's identity settings (api.auth, api.kerberos.*,
// api.acl.*, api.groups_file, api.host_groups, api.proxy_users,
// api.job_groups). The others are the keys of next that differ and need a
// restart.
func reloadedConfig(running, next Config) (Config, []string) {
	out := running
	out.LogLevel = next.LogLevel
	out.Tokens, out.TokenFile = next.Tokens, next.TokenFile
	if (running.TLS.CertFile == "") == (next.TLS.CertFile == "") {
		out.TLS = next.TLS
	}
	a := next.API
	a.MaxBodyBytes, a.ReadTimeout, a.WriteTimeout = running.API.MaxBodyBytes, running.API.ReadTimeout, running.API.WriteTimeout
	a.MaxConnections, a.MaxKinds, a.PublicMetrics = running.API.MaxConnections, running.API.MaxKinds, running.API.PublicMetrics
	out.API = a
	was, now, applied := flatten(reflect.ValueOf(running), ""), flatten(reflect.ValueOf(next), ""), flatten(reflect.ValueOf(out), "")
	var restart []string
	for k, v := range now {
		if !reflect.DeepEqual(was[k], v) && !reflect.DeepEqual(applied[k], v) {
			restart = append(restart, k)
		}
	}
	sort.Strings(restart)
	return out, restart
}

// levelOf is the slog level of log_level (validated: info when unknown).
func levelOf(s string) slog.Level {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(s)); err != nil {
		return slog.LevelInfo
	}
	return lv
}

// reloader re-reads the configuration on each signal of opts.Reload and
// applies what it can (reloadedConfig) without dropping a request: a new
// handler and TLS configuration are built in full, then swapped. A
// configuration that does not load or build changes nothing: the daemon
// serves on with what it had, and says why at ERROR.
type reloader struct {
	running Config
	load    func() (Config, error)
	level   *slog.LevelVar
	build   func(Config) (apiH, h http.Handler, _ *tls.Config, _ error)
	srv     *served
	log     *slog.Logger
	// done, when set (tests), is called after each reload with its error.
	done func(error)
}

func (r *reloader) run(ctx context.Context, sig <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-sig:
			err := r.reload()
			if err != nil {
				r.log.Error("reload failed: serving on with the configuration loaded before", "err", err)
			}
			if r.done != nil {
				r.done(err)
			}
		}
	}
}

func (r *reloader) reload() error {
	next, err := r.load()
	if err != nil {
		return fmt.Errorf("reload: %w", err)
	}
	cfg, restart := reloadedConfig(r.running, next)
	if len(cfg.Tokens) == 0 && cfg.API.Auth != api.AuthKerberos {
		return cfgErr("tokens", "reload: at least one API token is required to serve with api.auth %s (tokens or token_file)", cfg.API.Auth)
	}
	apiH, h, t, err := r.build(cfg)
	if err != nil {
		return fmt.Errorf("reload: %w", err)
	}
	r.srv.api.Store(&apiH)
	r.srv.handler.Store(&h)
	if t != nil {
		r.srv.tls.Store(t)
	}
	if r.level != nil {
		r.level.Set(levelOf(cfg.LogLevel))
	}
	r.running = cfg
	r.log.Info("reloaded", "log_level", cfg.LogLevel, "tokens", len(cfg.Tokens), "tls", cfg.TLS.CertFile != "", "auth", cfg.API.Auth)
	if len(restart) > 0 {
		r.log.Warn("changed keys that a reload does not apply: restart colocd for them", "keys", strings.Join(slices.Compact(restart), ","))
	}
	return nil
}
