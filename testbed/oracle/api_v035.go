//go:build !dra_v034

package main

import (
	"errors"

	"k8s.io/dynamic-resource-allocation/structured"
)

// From k8s.io/dynamic-resource-allocation v0.35 (built without the dra_v034 tag): an error wrapping
// structured.ErrFailedAllocationOnNode fails only this node (kube-scheduler's DynamicResources filter marks it
// unschedulable and tries the others).

func failedOnNode(err error) bool {
	return errors.Is(err, structured.ErrFailedAllocationOnNode)
}
