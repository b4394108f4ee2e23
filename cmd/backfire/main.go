// Command backfire finds the Kubernetes safeguards that will backfire and
// proves each one with the manifest's own numbers.
package main

import (
	"errors"
	"fmt"
	"os"
)

// Exit codes of the command-line contract.
const (
	exitClean    = 0 // nothing at or above --fail-on
	exitFindings = 1 // findings at or above --fail-on
	exitUsage    = 2 // usage error, or input that could not be read or parsed
)

// exitError carries an exit code through cobra.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	cmd := newRootCommand()
	cmd.SetArgs(args)
	err := cmd.Execute()
	var ee exitError
	switch {
	case err == nil:
		return exitClean
	case errors.As(err, &ee):
		return ee.code
	default:
		fmt.Fprintln(os.Stderr, "backfire:", err)
		return exitUsage
	}
}
