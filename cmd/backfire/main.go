// Command backfire finds the Kubernetes safeguards that will backfire and
// proves each one with the manifest's own numbers.
package main

import (
	"errors"
	"fmt"
	"io"
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
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := newRootCommand()
	cmd.SetArgs(args)
	cmd.SetIn(stdin)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	err := cmd.Execute()
	var ee exitError
	switch {
	case err == nil:
		return exitClean
	case errors.As(err, &ee):
		return ee.code
	default:
		fmt.Fprintln(stderr, "backfire:", err)
		return exitUsage
	}
}
