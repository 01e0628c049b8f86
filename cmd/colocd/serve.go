package main

import (
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/colocd/colocd/daemon"
)

func newServeCmd(g *globals) *cobra.Command {
	var rollback bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon (HTTP API, admission and learning loops)",
		Long: `Run colocd until SIGTERM or SIGINT, then shut down gracefully: stop accepting
requests, finish the admission pass in flight, close the store, exit 0.

  colocd serve --config configs/demo.yaml     # embedded simulator, no outside service
  colocd serve --config /etc/colocd/colocd.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd, g, nil)
			if err != nil {
				return err
			}
			log := newLogger(cmd.ErrOrStderr(), cfg.LogLevel, cfg.LogFormat)
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			// After the first signal, a second one kills at once.
			go func() { <-ctx.Done(); stop() }()
			return daemon.Serve(ctx, cfg, daemon.ServeOptions{Logger: log, Version: versionString(), AcceptStoreRollback: rollback})
		},
	}
	cmd.Flags().BoolVar(&rollback, "accept-store-rollback", false,
		"open a store whose newest meta page is damaged at the older transaction, losing the newer one (once, after reading the refusal)")
	return cmd
}
