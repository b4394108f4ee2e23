// Package config reads .backfire.yaml: rules to turn off or on, severity
// overrides, and the thresholds some rules use.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
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

	// Path is where the configuration was read from ("" for defaults).
	Path string `json:"-"`
}

// Thresholds tune rules; zero means the default.
type Thresholds struct {
	// RollbackWeight is the backtrack weight from which BF401 reports
	// (default 50).
	RollbackWeight int `json:"rollbackWeight,omitempty"`
	// StartupBudgetSeconds is the startupProbe budget that holds liveness
	// back long enough for a crash recovery (BF101, default 600).
	StartupBudgetSeconds int `json:"startupBudgetSeconds,omitempty"`
	// FewReplicas is the replica count at or below which one slow answer
	// can empty the endpoints (BF104, default 3).
	FewReplicas int `json:"fewReplicas,omitempty"`
}

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

// RollbackWeight returns the BF401 threshold.
func (c *Config) RollbackWeight() int { return orDefault(c.Thresholds.RollbackWeight, 50) }

// StartupBudgetSeconds returns the BF101 startup budget threshold.
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

// Load reads a configuration file; unknown fields are errors, so a typo
// does not silently leave a rule on.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Config
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.Path = path
	return &c, nil
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
