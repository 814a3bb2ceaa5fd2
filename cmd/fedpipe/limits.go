package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/manifest"
)

// manifestLimits are the bounds loadGraph checks manifests against: the defaults and this
// machine's memory (manifest.MachineLimits). registerLimits binds them to the command's
// --max-* flags (and resets them to the defaults).
var manifestLimits = manifest.MachineLimits()

// registerLimits adds the flags that raise the manifest bounds where a real use exists.
func registerLimits(fs *pflag.FlagSet) {
	manifestLimits = manifest.MachineLimits()
	fs.IntVar(&manifestLimits.MaxCells, "max-cells", manifest.DefaultLimits.MaxCells, "refuse manifests of more runs (methods × grid × method grids × seeds)")
	fs.IntVar(&manifestLimits.MaxRounds, "max-rounds", manifest.DefaultLimits.MaxRounds, "refuse train.rounds above this")
	fs.IntVar(&manifestLimits.MaxClients, "max-clients", manifest.DefaultLimits.MaxClients, "refuse partition.clients (and synthetic dataset.devices) above this")
}

// checkFlagValues refuses values no command can mean: an empty string (--store "" would
// otherwise silently mean ./.fedpipe), a negative or zero duration, a negative or zero
// number, with exit 2 and a line for each.
func checkFlagValues(fs *pflag.FlagSet) error {
	var msgs []string
	fs.Visit(func(f *pflag.Flag) {
		v := f.Value.String()
		switch f.Value.Type() {
		case "string":
			if strings.TrimSpace(v) == "" {
				msgs = append(msgs, fmt.Sprintf("--%s: empty value (leave the flag out for its default)", f.Name))
			}
		case "stringSlice", "stringArray":
			if v == "[]" || strings.Contains(v, "[,") || strings.Contains(v, ",]") || strings.Contains(v, ",,") {
				msgs = append(msgs, fmt.Sprintf("--%s: empty value in %s", f.Name, v))
			}
		case "duration":
			if d, err := time.ParseDuration(v); err == nil && d < 0 {
				msgs = append(msgs, fmt.Sprintf("--%s: negative duration %s", f.Name, v))
			}
		case "int", "int64", "uint", "uint64":
			if strings.HasPrefix(v, "-") || v == "0" && strings.HasPrefix(f.Name, "max-") {
				msgs = append(msgs, fmt.Sprintf("--%s: must be positive, got %s", f.Name, v))
			}
		}
	})
	if len(msgs) == 0 {
		return nil
	}
	for i, m := range msgs {
		msgs[i] = fmt.Sprintf("fedpipe %s: %s", fs.Name(), m)
	}
	return failf(exitInvalid, "%s", strings.Join(msgs, "\n"))
}
