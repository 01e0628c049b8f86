package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/colocd/colocd/daemon"
)

// newConfigCmd is `colocd config check`.
func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check the daemon's configuration",
		Long: `Commands about the daemon's configuration file (the packages install it as
` + defaultConfigPath + `):

  colocd config check               # validate; every key's value and source
  colocd config check --config F    # another file`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var (
		cf     *configFlags
		asJSON bool
	)
	check := &cobra.Command{
		Use:   "check",
		Short: "Validate the configuration and print every key's effective value and source",
		Long: `Load the configuration as colocd serve would — the file (--config, env
COLOCD_CONFIG, else ` + defaultConfigPath + ` when it exists), COLOCD_*
variables, token_file — and validate it. Print every key with its effective
value and where it came from (default, file:line, env, flag); secrets are
hidden. Exit 0 when it is valid, 2 naming the key that is not.

Run it as the service user to check that it can read everything:
  sudo -u colocd colocd config check`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			file, err := cf.path()
			if err != nil {
				return err
			}
			sources := map[string]string{}
			cfg, err := daemon.Load(daemon.LoadOptions{File: file, Flags: cmd.Flags(), Sources: sources})
			if err != nil {
				return err
			}
			vals := daemon.Effective(cfg, sources)
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					File string                  `json:"file"`
					Keys []daemon.EffectiveValue `json:"keys"`
				}{file, vals})
			}
			shown := file
			if shown == "" {
				shown = "none: defaults, environment and flags only"
			}
			fmt.Fprintf(out, "config %s: valid\n\n", shown)
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY\tSOURCE\tVALUE")
			for _, v := range vals {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Key, v.Source, v.Value)
			}
			return tw.Flush()
		},
	}
	cf = addConfigFlags(check.Flags())
	check.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(check)
	return cmd
}
