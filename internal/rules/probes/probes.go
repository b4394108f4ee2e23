// Package probes holds the probe rules (BF1xx): liveness probes that kill a
// slow but healthy server, and keep killing it through crash recovery.
package probes

import "backfire.dev/backfire/internal/rules"

// Rules is this family's part of the catalog.
var Rules = []*rules.Rule{BF102}
