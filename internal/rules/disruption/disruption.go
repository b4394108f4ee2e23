// Package disruption holds the rules about what stops or survives a
// disruption (BF3xx): disruption budgets that refuse every eviction, and
// StatefulSets whose quorum can never form again after all their pods
// restart.
package disruption
