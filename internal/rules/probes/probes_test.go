package probes_test

import (
	"testing"

	"backfire.dev/backfire/internal/rules/probes"
	"backfire.dev/backfire/internal/rules/rulestest"
)

func TestBF101Fixtures(t *testing.T) { rulestest.Fixtures(t, probes.BF101) }
func TestBF102Fixtures(t *testing.T) { rulestest.Fixtures(t, probes.BF102) }
func TestBF103Fixtures(t *testing.T) { rulestest.Fixtures(t, probes.BF103) }
func TestBF104Fixtures(t *testing.T) { rulestest.Fixtures(t, probes.BF104) }
