//go:build dra_v034

package main

// k8s.io/dynamic-resource-allocation v0.34 (built with the dra_v034 tag; the testbed Makefile sets it per
// release) has no structured.ErrFailedAllocationOnNode (added in v0.35, structured/allocator.go): every error of
// Allocate aborts the pod's scheduling attempt (kube-scheduler v1.34.4 dynamicresources.go: statusError).

func failedOnNode(error) bool {
	return false
}
