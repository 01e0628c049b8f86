package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/colocd/colocd/daemon"
	"github.com/colocd/colocd/telemetry"
)

func newServeCmd() *cobra.Command {
	var (
		rollback bool
		cf       *configFlags
	)
	cmd := &cobra.Command{
		Use:        "serve",
		Short:      "Run the daemon (HTTP API, admission and learning loops)",
		SuggestFor: []string{"start", "daemon", "server"},
		Long: `Run colocd until SIGTERM or SIGINT, then shut down gracefully: stop accepting
requests, finish the admission pass in flight, close the store, exit 0.

  colocd serve --config configs/demo.yaml     # embedded simulator, no outside service
  colocd serve --config /etc/colocd/colocd.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd, cf, nil)
			if err != nil {
				return err
			}
			log, level := newLogger(cmd.ErrOrStderr(), cfg.LogLevel, cfg.LogFormat)
			// Under systemd (Type=notify): readiness, status, watchdog.
			systemd, err := daemon.SystemdFromEnv()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			// After the first signal, a second one kills at once.
			go func() { <-ctx.Done(); stop() }()
			// SIGHUP (systemctl reload): the tokens, TLS certificates, log
			// level and the API's identity settings, read again.
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			reloaded := make(chan struct{}, 1)
			go func() {
				for {
					select {
					case <-ctx.Done():
						return
					case <-hup:
						select {
						case reloaded <- struct{}{}:
						default: // one is pending already
						}
					}
				}
			}()
			rev, modified := buildInfo()
			if modified {
				rev += "-dirty"
			}
			return daemon.Serve(ctx, cfg, daemon.ServeOptions{Logger: log, Version: versionString(), AcceptStoreRollback: rollback,
				Systemd: systemd, Build: telemetry.BuildInfo{Version: version, Revision: rev},
				Reloaded: reloaded, LogLevel: level,
				Reload: func() (daemon.Config, error) { return loadConfig(cmd, cf, nil) }})
		},
	}
	cf = addConfigFlags(cmd.Flags(), "listen", "data-dir", "log-level")
	cmd.Flags().BoolVar(&rollback, "accept-store-rollback", false,
		"open a store whose newest meta page is damaged at the older transaction, losing the newer one (once, after reading the refusal)")
	return cmd
}
