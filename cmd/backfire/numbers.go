package main

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"
)

// numberFlag refuses a number flag's value unless it is finite and ok (the
// flag's own range): a comparison with NaN is false, so a range check
// written as "v < lo || v > hi" lets NaN through, and pflag reads "NaN",
// "Inf" and "-Inf" as numbers.
func numberFlag(cmd *cobra.Command, name string, v float64, ok bool, want string) error {
	if ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
		return nil
	}
	return usageError(cmd, "--%s %s: want %s", name, formatNumber(v), want)
}

// formatNumber shows a flag's value as it was most likely written.
func formatNumber(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return fmt.Sprint(v)
}
