//go:build dra_v038

package main

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/sets"
	draapi "k8s.io/dynamic-resource-allocation/api"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

// The allocator API of k8s.io/dynamic-resource-allocation from v0.38 (built with the dra_v038 tag; the
// testbed Makefile sets it per release): NewAllocator takes the allocator's own draapi.ResourceSlice, converted
// from resource.k8s.io/v1 with draapi.Convert_v1_ResourceSlice_To_api_ResourceSlice as upstream's tests do, and
// the allocated state keeps the devices with shared allocations by device ID only (schedulerapi/types.go).

func newAllocator(ctx context.Context, s *scenario, celCache *cel.Cache) (structured.Allocator, error) {
	slices := make([]*draapi.ResourceSlice, len(s.slices))
	for i, in := range s.slices {
		slices[i] = &draapi.ResourceSlice{}
		if err := draapi.Convert_v1_ResourceSlice_To_api_ResourceSlice(in, slices[i], nil); err != nil {
			return nil, fmt.Errorf("slices[%d]: %w", i, err)
		}
	}
	return structured.NewAllocator(ctx, s.features, s.state, s.classes, slices, celCache)
}

func newSharedDeviceIDs() sets.Set[structured.DeviceID] {
	return sets.New[structured.DeviceID]()
}

func insertSharedDeviceID(state *structured.AllocatedState, device structured.DeviceID, _ string) {
	state.AllocatedSharedDeviceIDs.Insert(device)
}
