// Package config reads .backfire.yaml: rules to turn off or on, severity
// overrides, and the thresholds some rules use.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// FileNames are looked for in the working directory and its parents.
var FileNames = []string{".backfire.yaml", ".backfire.yml"}

// Config is the project's configuration. The zero value is valid: every
// field falls back to the documented default.
type Config struct {
	// Disable turns rules off by ID ("BF203").
	Disable []string `json:"disable,omitempty"`
	// Enable turns on rules that are off by default.
	Enable []string `json:"enable,omitempty"`
	// Severity overrides a rule's severity: {BF102: error}.
	Severity   map[string]string `json:"severity,omitempty"`
	Thresholds Thresholds        `json:"thresholds,omitempty"`
	// Ignore lists path globs, relative to the configuration file's
	// directory, of inputs not to scan ("charts/vendor/**", "**/*-test.yaml").
	Ignore []string `json:"ignore,omitempty"`

	// Path is where the configuration was read from ("" for defaults).
	Path string `json:"-"`
	// at holds the position of each rule ID written in the file, by
	// section: "severity/BF102" -> "file:3:3".
	at map[string]string
}

// At returns where an entry of a section ("disable", "enable",
// "severity") naming rule id was written, "file:line:col", or the file's
// name when it was not read from a file.
func (c *Config) At(section, id string) string {
	if p, ok := c.at[section+"/"+strings.ToUpper(id)]; ok {
		return p
	}
	if c.Path != "" {
		return c.Path
	}
	return "configuration"
}

// Thresholds tune rules; zero means the default.
type Thresholds struct {
	// RollbackWeight is the backtrack weight from which BF401 reports,
	// and the weight a Flagger rollback moves at once from which BF412
	// reports (default 50).
	RollbackWeight int `json:"rollbackWeight,omitempty"`
	// StartupBudgetSeconds is the crash recovery a startupProbe must allow:
	// the budget that holds liveness back long enough (BF101), and the one a
	// startup probe that fails during recovery must reach (BF105); default 600.
	StartupBudgetSeconds int `json:"startupBudgetSeconds,omitempty"`
	// FewReplicas is the replica count at or below which one slow answer
	// can empty the endpoints (BF104, default 3).
	FewReplicas int `json:"fewReplicas,omitempty"`
	// StopWriteMiBPerSecond is the disk write rate assumed for what a
	// database writes as it stops (BF601, default 100).
	StopWriteMiBPerSecond int `json:"stopWriteMiBPerSecond,omitempty"`
}

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

// RollbackWeight returns the BF401 and BF412 threshold.
func (c *Config) RollbackWeight() int { return orDefault(c.Thresholds.RollbackWeight, 50) }

// StartupBudgetSeconds returns the BF101 and BF105 startup budget threshold.
func (c *Config) StartupBudgetSeconds() int {
	return orDefault(c.Thresholds.StartupBudgetSeconds, 600)
}

// SeverityOf returns the severity override for rule id, matching the ID
// in any case as the rest of the configuration does ("bf102: error").
func (c *Config) SeverityOf(id string) (string, bool) {
	for k, v := range c.Severity {
		if strings.EqualFold(k, id) {
			return v, true
		}
	}
	return "", false
}

// FewReplicas returns the BF104 replica threshold.
func (c *Config) FewReplicas() int { return orDefault(c.Thresholds.FewReplicas, 3) }

// StopWriteMiBPerSecond returns the BF601 write rate.
func (c *Config) StopWriteMiBPerSecond() int {
	return orDefault(c.Thresholds.StopWriteMiBPerSecond, 100)
}

// Load reads a configuration file. Unknown keys and bad values are errors
// with the file, line and column, so a typo does not silently leave a rule
// on.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Parse reads a configuration from data; name is the file it came from.
func Parse(name string, data []byte) (*Config, error) {
	c := &Config{Path: name, at: map[string]string{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(doc.Content) == 0 {
		return c, nil // an empty file is the defaults
	}
	p := parser{name: name, c: c}
	p.top(doc.Content[0])
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return c, nil
}

// parser walks the YAML nodes, collecting every error, each at its place.
type parser struct {
	name string
	c    *Config
	errs []error
}

func (p *parser) fail(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s:%d:%d: %s", p.name, n.Line, n.Column, fmt.Sprintf(format, args...)))
}

func (p *parser) pos(n *yaml.Node) string { return fmt.Sprintf("%s:%d:%d", p.name, n.Line, n.Column) }

// mapping calls f for each key of a mapping node.
func (p *parser) mapping(n *yaml.Node, what string, f func(key string, k, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		if n.Tag != "!!null" {
			p.fail(n, "%s must be a mapping", what)
		}
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		f(n.Content[i].Value, n.Content[i], n.Content[i+1])
	}
}

func (p *parser) strings(n *yaml.Node, what string) []*yaml.Node {
	if n.Kind != yaml.SequenceNode {
		if n.Tag != "!!null" {
			p.fail(n, "%s must be a list", what)
		}
		return nil
	}
	var out []*yaml.Node
	for _, item := range n.Content {
		if item.Kind != yaml.ScalarNode || item.Tag != "!!str" || item.Value == "" {
			p.fail(item, "%s: want a string, not %q", what, item.Value)
			continue
		}
		out = append(out, item)
	}
	return out
}

func (p *parser) top(n *yaml.Node) {
	p.mapping(n, "the configuration", func(key string, k, v *yaml.Node) {
		switch key {
		case "disable", "enable":
			for _, item := range p.strings(v, key) {
				if key == "disable" {
					p.c.Disable = append(p.c.Disable, item.Value)
				} else {
					p.c.Enable = append(p.c.Enable, item.Value)
				}
				p.c.at[key+"/"+strings.ToUpper(item.Value)] = p.pos(item)
			}
		case "severity":
			p.mapping(v, "severity", func(id string, k, v *yaml.Node) {
				if !validSeverity(v.Value) || v.Kind != yaml.ScalarNode {
					p.fail(v, "severity of %s: %q is not error, warning or info", id, v.Value)
					return
				}
				if p.c.Severity == nil {
					p.c.Severity = map[string]string{}
				}
				p.c.Severity[strings.ToUpper(id)] = strings.ToLower(v.Value)
				p.c.at["severity/"+strings.ToUpper(id)] = p.pos(k)
			})
		case "thresholds":
			p.mapping(v, "thresholds", func(name string, k, v *yaml.Node) {
				dst := map[string]*int{
					"rollbackWeight":        &p.c.Thresholds.RollbackWeight,
					"startupBudgetSeconds":  &p.c.Thresholds.StartupBudgetSeconds,
					"fewReplicas":           &p.c.Thresholds.FewReplicas,
					"stopWriteMiBPerSecond": &p.c.Thresholds.StopWriteMiBPerSecond,
				}[name]
				if dst == nil {
					p.fail(k, "unknown threshold %q (want rollbackWeight, startupBudgetSeconds, fewReplicas or stopWriteMiBPerSecond)", name)
					return
				}
				var n int
				if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || v.Decode(&n) != nil || n <= 0 {
					p.fail(v, "threshold %s: %q is not a positive whole number", name, v.Value)
					return
				}
				if name == "rollbackWeight" && n > 100 {
					p.fail(v, "threshold rollbackWeight: %d is over 100 (a percentage of traffic)", n)
					return
				}
				*dst = n
			})
		case "ignore":
			for _, item := range p.strings(v, key) {
				if err := checkGlob(item.Value); err != nil {
					p.fail(item, "ignore: %v", err)
					continue
				}
				p.c.Ignore = append(p.c.Ignore, item.Value)
			}
		default:
			p.fail(k, "unknown key %q (want disable, enable, severity, thresholds or ignore)", key)
		}
	})
}

// validSeverity: the severities a finding can have. "none" is a --fail-on
// level, not a severity.
func validSeverity(s string) bool {
	switch strings.ToLower(s) {
	case "error", "warning", "warn", "info":
		return true
	}
	return false
}

// Find looks for a configuration file in dir and its parents, stopping at
// the top of a git work tree. It returns "" when there is none.
func Find(dir string) string {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		for _, name := range FileNames {
			p := filepath.Join(dir, name)
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Discover loads the configuration found from dir, or the defaults.
func Discover(dir string) (*Config, error) {
	p := Find(dir)
	if p == "" {
		return &Config{}, nil
	}
	c, err := Load(p)
	if errors.Is(err, os.ErrNotExist) {
		return &Config{}, nil
	}
	return c, err
}
