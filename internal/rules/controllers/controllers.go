// Package controllers holds the rules about the controllers around a
// workload (BF8xx): an autoscaler whose count every GitOps sync resets, a
// CronJob that one hung run stops for good.
package controllers
