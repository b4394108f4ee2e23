// Command backfire finds the Kubernetes safeguards that will backfire and
// proves each one with the manifest's own numbers.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"backfire.dev/backfire/internal/report"
)

// Exit codes of the command-line contract.
const (
	exitClean    = 0 // nothing at or above --fail-on
	exitFindings = 1 // findings at or above --fail-on
	exitUsage    = 2 // usage error, or input that could not be read or parsed
	// exitPending is fix --diff's: the files are not as fix would write
	// them (gofmt -l, terraform plan -detailed-exitcode), so CI can tell
	// "run backfire fix" from "nothing to do" and from an error.
	exitPending = 3
)

// exitError carries an exit code through cobra.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func main() {
	tuneGC()
	stopProfiles := startProfiles(os.Stderr)
	code := runAs(filepath.Base(os.Args[0]), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stopProfiles()
	os.Exit(code)
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runAs("backfire", args, stdin, stdout, stderr)
}

// KubectlPlugin is the name that makes the binary a kubectl plugin: kubectl
// runs any executable named kubectl-NAME on the PATH for "kubectl NAME".
const KubectlPlugin = "kubectl-backfire"

// commandName is how help and usage name the command: "kubectl backfire"
// when the binary was started as the plugin.
func commandName(argv0 string) string {
	name := strings.TrimSuffix(strings.ToLower(argv0), ".exe")
	if name == KubectlPlugin {
		return "kubectl backfire"
	}
	return "backfire"
}

func runAs(argv0 string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := newRootCommand()
	if name := commandName(argv0); name != "backfire" {
		cmd.Use = name
		// Cobra would print "kubectl backfire" as two words of a path; the
		// annotation tells it the whole is the command's name.
		cmd.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: name}
	}
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
		report.Message(stderr, err.Error())
		return exitUsage
	}
}
