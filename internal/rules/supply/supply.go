// Package supply holds the rules about where a workload's images come
// from (BF9xx): a restart that needs a registry the cluster itself runs.
package supply
