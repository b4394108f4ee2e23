package classify

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"slices"
	"strconv"
	"strings"
)

// How a shell function treats the command it is given.
const (
	// RunsArgs: it runs its arguments as a command and returns their
	// status ("$@").
	RunsArgs = "runs its arguments"
	// RunsFirst: it runs its first argument, a command line, until it
	// succeeds, and fails when every try failed.
	RunsFirst = "runs its first argument until it succeeds"
	// RunsNothing: it runs no command of its caller and asks no server.
	RunsNothing = "runs nothing of its caller's"
)

// ShellFunction is a function of a shell library an image ships, which
// probe scripts source and call.
type ShellFunction struct {
	Name    string
	Library string // "/opt/bitnami/scripts/libos.sh"
	Runs    string // RunsArgs, RunsFirst or RunsNothing
	What    string
	Source  string
}

// ShellFunctions are the library functions the probe reading evaluates
// through. A probe that calls a function that is neither defined in its
// script, nor in a file of the input it sources, nor here is an
// assumption, said as such.
var ShellFunctions = []ShellFunction{
	{Name: "debug_execute", Library: "/opt/bitnami/scripts/libos.sh", Runs: RunsArgs,
		What:   "runs its arguments and returns their status, with their output hidden unless BITNAMI_DEBUG is set",
		Source: "bitnami/containers: bitnami/*/prebuildfs/opt/bitnami/scripts/libos.sh `debug_execute` (\"$@\", or \"$@\" >/dev/null 2>&1)"},
	{Name: "retry_while", Library: "/opt/bitnami/scripts/libos.sh", Runs: RunsFirst,
		What:   "runs its first argument, a command line, up to $2 times (12) $3 s apart (5), and fails when every try failed",
		Source: "bitnami/containers: bitnami/*/prebuildfs/opt/bitnami/scripts/libos.sh `retry_while`"},
	{Name: "am_i_root", Library: "/opt/bitnami/scripts/libos.sh", Runs: RunsNothing,
		What:   "compares id -u with 0",
		Source: "bitnami/containers: bitnami/*/prebuildfs/opt/bitnami/scripts/libos.sh `am_i_root`"},
	{Name: "is_boolean_yes", Library: "/opt/bitnami/scripts/libvalidations.sh", Runs: RunsNothing,
		What:   "tests whether a value is 1, yes or true",
		Source: "bitnami/containers: bitnami/*/prebuildfs/opt/bitnami/scripts/libvalidations.sh `is_boolean_yes`"},
	{Name: "is_empty_value", Library: "/opt/bitnami/scripts/libvalidations.sh", Runs: RunsNothing,
		What:   "tests whether a value is empty",
		Source: "bitnami/containers: bitnami/*/prebuildfs/opt/bitnami/scripts/libvalidations.sh `is_empty_value`"},
	{Name: "info", Library: "/opt/bitnami/scripts/liblog.sh", Runs: RunsNothing, What: "prints a log line",
		Source: "bitnami/containers: bitnami/*/prebuildfs/opt/bitnami/scripts/liblog.sh `info`"},
	{Name: "warn", Library: "/opt/bitnami/scripts/liblog.sh", Runs: RunsNothing, What: "prints a log line",
		Source: "bitnami/containers: bitnami/*/prebuildfs/opt/bitnami/scripts/liblog.sh `warn`"},
	{Name: "error", Library: "/opt/bitnami/scripts/liblog.sh", Runs: RunsNothing, What: "prints a log line",
		Source: "bitnami/containers: bitnami/*/prebuildfs/opt/bitnami/scripts/liblog.sh `error`"},
	{Name: "debug", Library: "/opt/bitnami/scripts/liblog.sh", Runs: RunsNothing, What: "prints a log line when BITNAMI_DEBUG is set",
		Source: "bitnami/containers: bitnami/*/prebuildfs/opt/bitnami/scripts/liblog.sh `debug`"},
}

// ShellFunctionNamed returns the row of a library function, or nil.
func ShellFunctionNamed(name string) *ShellFunction {
	for i := range ShellFunctions {
		if ShellFunctions[i].Name == name {
			return &ShellFunctions[i]
		}
	}
	return nil
}

// funcStart matches the head of a shell function definition: "name() {",
// "function name {", "function name() {".
var funcStart = lazyregexp.New(`(?m)^[ \t]*(?:function[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?:\(\s*\))?|([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(\s*\))[ \t]*\{`)

// functionDefs takes the function definitions out of a shell script: their
// bodies by name, and the script without them.
func functionDefs(script string) (map[string]string, string) {
	defs := map[string]string{}
	var rest strings.Builder
	for {
		m := funcStart().FindStringSubmatchIndex(script)
		if m == nil {
			rest.WriteString(script)
			return defs, rest.String()
		}
		var name string
		if m[2] >= 0 {
			name = script[m[2]:m[3]]
		} else {
			name = script[m[4]:m[5]]
		}
		open := m[1] // just after "{"
		end := closingBrace(script, open)
		defs[name] = script[open:end]
		rest.WriteString(script[:m[0]])
		if end < len(script) {
			end++
		}
		script = script[end:]
	}
}

// closingBrace finds the "}" that ends a body starting at open, outside
// quotes; len(s) when there is none.
func closingBrace(s string, open int) int {
	depth := 1
	var quote byte
	for i := open; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(s)
}

// calls are the simple commands a script runs, with shell functions
// evaluated through: a function defined in the script, or in a file of the
// input the script sources, stands for its body (its "$@" and "$1" are the
// call's arguments); a library function of the table stands for the
// command it runs. via says, for each command, the functions it was
// reached through ("" when none). unknown lists the functions called that
// are defined nowhere backfire can read, when the script sources a file
// the input does not hold; missing lists those files.
type calls struct {
	cmds    [][]string
	via     []string
	unknown []string
	missing []string
}

func scriptCalls(script string, files Files) calls {
	defs, rest := functionDefs(script)
	top := splitScript(rest)
	var cs calls
	for _, cmd := range top {
		if (cmd[0] == "." || cmd[0] == "source") && len(cmd) > 1 {
			if f, ok := lookup(files, cmd[1]); ok {
				more, _ := functionDefs(f.Text)
				for k, b := range more {
					if _, seen := defs[k]; !seen {
						defs[k] = b
					}
				}
			} else if !slices.Contains(cs.missing, cmd[1]) {
				cs.missing = append(cs.missing, cmd[1])
			}
		}
	}
	var expand func(in [][]string, via string, depth int)
	expand = func(in [][]string, via string, depth int) {
		for _, cmd := range in {
			name := cmd[0]
			if body, ok := defs[name]; ok && depth < maxScriptDepth {
				expand(withCallArgs(splitScript(body), cmd[1:]), chain(via, name+", defined in the script"), depth+1)
				continue
			}
			if fn := ShellFunctionNamed(name); fn != nil && depth < maxScriptDepth {
				how := chain(via, name+" of "+fn.Library+", which "+fn.What)
				switch fn.Runs {
				case RunsArgs:
					if inner := stripWrappers(cmd[1:]); len(inner) > 0 {
						expand([][]string{inner}, how, depth+1)
					}
				case RunsFirst:
					if len(cmd) > 1 {
						expand(splitScript(cmd[1]), how, depth+1)
					}
				}
				continue
			}
			if len(cs.missing) > 0 && functionLike(name) && !slices.Contains(cs.unknown, name) {
				cs.unknown = append(cs.unknown, name)
			}
			cs.cmds = append(cs.cmds, cmd)
			cs.via = append(cs.via, via)
		}
	}
	expand(top, "", 0)
	return cs
}

func chain(via, step string) string {
	if via == "" {
		return step
	}
	return via + "; then " + step
}

// withCallArgs puts a call's arguments where a function body reads them:
// "$@", "$*", "$1"...
func withCallArgs(body [][]string, args []string) [][]string {
	var out [][]string
	for _, cmd := range body {
		var words []string
		for _, w := range cmd {
			switch {
			case w == "$@" || w == "$*" || w == "${@}" || w == "${*}":
				words = append(words, args...)
			case len(w) == 2 && w[0] == '$' && w[1] >= '1' && w[1] <= '9':
				if n, _ := strconv.Atoi(w[1:]); n <= len(args) {
					words = append(words, args[n-1])
				}
			default:
				words = append(words, w)
			}
		}
		if cmd := stripWrappers(words); len(cmd) > 0 {
			out = append(out, cmd)
		}
	}
	return out
}

// shellBuiltins run no program and ask no server.
var shellBuiltins = []string{".", "source", "set", "export", "local", "readonly", "declare", "unset", "shift", "return", "read", "eval", "cd", "trap", "umask", "ulimit", "type", "hash", "wait"}

// functionLike tells a call of a library function (postgresql_enable_nss_wrapper)
// from a program: Bitnami's functions have underscores, programs rarely
// do, and a path is always a program.
func functionLike(name string) bool {
	if strings.Contains(name, "/") || !strings.Contains(name, "_") || slices.Contains(shellBuiltins, name) || contains(NonQueryCommands, name) {
		return false
	}
	for _, s := range Servers {
		for _, qc := range s.QueryCommands {
			if strings.Fields(qc)[0] == name {
				return false
			}
		}
	}
	return identifier().MatchString(name)
}

var identifier = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*$`)
