package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"unlearn/experiment"
	"unlearn/olbfgs"
)

// TestFieldFlagsAreFlags: every flag fieldFlags maps a library field to
// is a flag of some command (a typo would leave the field's Go name in a
// message).
func TestFieldFlagsAreFlags(t *testing.T) {
	flags := map[string]bool{}
	for _, c := range newRootCmd().Commands() {
		c.Flags().VisitAll(func(f *pflag.Flag) { flags[f.Name] = true })
	}
	for field, flag := range fieldFlags {
		require.True(t, flags[flag] || flags[flag+"s"], "fieldFlags[%q] = %q is no command's flag", field, flag)
	}
}

// TestRewordFields: a library field error is said as the command's flag
// where it stands in the message (the plural flag of bench included),
// spec names become flags, and errors.Is, errors.As and the usage status
// see through.
func TestRewordFields(t *testing.T) {
	cmd := &cobra.Command{Use: "x"}
	cmd.Flags().IntSlice("taus", nil, "")
	cmd.Flags().Float64("step-decay", 0, "")
	cmd.Flags().Float64("step-power", 0, "")
	inner := &experiment.ConfigError{Field: "Tau", Value: 7, Want: "must be small"}
	err := rewordFields(cmd, usageError{fmt.Errorf("configuration 2: %w", inner)})
	require.Equal(t, "configuration 2: --taus: 7: must be small", err.Error())
	require.ErrorIs(t, err, experiment.ErrConfig)
	var ue usageError
	require.True(t, errors.As(err, &ue), "still a usage error")

	err = rewordFields(cmd, &olbfgs.ConfigError{Field: "StepPower", Symbol: "c", Value: 0.5, Want: "needs step_decay > 0"})
	require.Contains(t, err.Error(), "needs --step-decay > 0")
	require.NotContains(t, err.Error(), "StepPower")
	require.False(t, errors.As(err, &ue), "not made a usage error")

	cmd.Flags().Float64("eta", 0.1, "")
	require.NoError(t, cmd.Flags().Set("eta", "1e308"))
	err = causeHint(cmd, fmt.Errorf("event 2: %w", olbfgs.ErrDiverged))
	require.Equal(t, "event 2: "+olbfgs.ErrDiverged.Error()+" (given --eta 1e+308)", err.Error())
	require.ErrorIs(t, err, olbfgs.ErrDiverged)
}
