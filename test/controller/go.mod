// The controller harness (twin_trace_test.go) is not built here: hack/test-controller.sh
// copies it into the rollout package of the Argo Rollouts module. This go.mod keeps its
// imports (the controller's test fixture, testify's mocks) out of backfire's own module.
module backfire.dev/backfire/test/controller

go 1.26.0
