//go:build !dra_v038

package main

import (
	"context"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

// The allocator API of k8s.io/dynamic-resource-allocation up to v0.37 (built without the dra_v038 tag; the
// testbed Makefile sets the tag per release): NewAllocator takes resource.k8s.io/v1 ResourceSlices, and the
// allocated state keeps each shared allocation by device and share ID.

func newAllocator(ctx context.Context, s *scenario, celCache *cel.Cache) (structured.Allocator, error) {
	return structured.NewAllocator(ctx, s.features, s.state, s.classes, s.slices, celCache)
}

func newSharedDeviceIDs() sets.Set[structured.SharedDeviceID] {
	return sets.New[structured.SharedDeviceID]()
}

func insertSharedDeviceID(state *structured.AllocatedState, device structured.DeviceID, shareID string) {
	uid := toUID(shareID)
	state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(device, &uid))
}
