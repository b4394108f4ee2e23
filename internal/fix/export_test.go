package fix

import "backfire.dev/backfire/internal/finding"

// AgreeGeneral is Agree without the shortcuts of agreed.go: the reference
// the tests hold them to.
func AgreeGeneral(fs []finding.Finding) { agreeComposed(fs, nil, nil, nil, false) }

// Disjoint is disjoint, for the tests to count the groups it answers.
var Disjoint = disjoint
