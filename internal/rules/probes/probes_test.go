package probes_test

import (
	"testing"

	"backfire.dev/backfire/internal/rules/probes"
	"backfire.dev/backfire/internal/rules/rulestest"
)

func TestBF102Fixtures(t *testing.T) { rulestest.Fixtures(t, probes.BF102) }
