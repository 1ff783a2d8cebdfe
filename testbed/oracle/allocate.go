package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

// fixedShareID replaces the random share IDs of consumable-capacity allocations when the input asks for
// reproducible output (upstream's unit tests use the same trick).
const fixedShareID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"

// result is one scenario's outcome, in the shape `kubedra allocate -o json` prints per node.
type result struct {
	Node      string  `json:"node"`
	Allocated bool    `json:"allocated"`
	Error     *string `json:"error"`
	// FailedOnNode: the error is structured.ErrFailedAllocationOnNode, which kube-scheduler's DynamicResources
	// filter reports as "unschedulable on this node" and tries the other nodes; any other error aborts the
	// pod's scheduling attempt.
	FailedOnNode bool `json:"failedOnNode,omitempty"`
	// Panic: the allocator panicked on this input (the value recovered, as text). kube-scheduler does not
	// recover it: its Filter calls run in workqueue.ParallelizeUntil (pkg/scheduler/framework/parallelize),
	// whose workers defer utilruntime.HandleCrashWithContext, which re-panics (ReallyCrash): the process dies.
	Panic  *string       `json:"panic,omitempty"`
	Claims []claimResult `json:"claims"`
}

type claimResult struct {
	Namespace    string                                      `json:"namespace"`
	Name         string                                      `json:"name"`
	Results      []deviceResult                              `json:"results"`
	NodeSelector *v1.NodeSelector                            `json:"nodeSelector"`
	Config       []resourceapi.DeviceAllocationConfiguration `json:"config"`
}

type deviceResult struct {
	Request                  string                         `json:"request"`
	Driver                   string                         `json:"driver"`
	Pool                     string                         `json:"pool"`
	Device                   string                         `json:"device"`
	AdminAccess              bool                           `json:"adminAccess,omitempty"`
	ShareID                  string                         `json:"shareID,omitempty"`
	ConsumedCapacity         map[string]string              `json:"consumedCapacity,omitempty"`
	Tolerations              []resourceapi.DeviceToleration `json:"tolerations,omitempty"`
	BindingConditions        []string                       `json:"bindingConditions,omitempty"`
	BindingFailureConditions []string                       `json:"bindingFailureConditions,omitempty"`
}

// classLister serves DeviceClasses by name, answering NotFound like the scheduler's informer lister
// (k8s.io/client-go listers/resource/v1/deviceclass.go: resourcev1.Resource("deviceclass"), singular).
type classLister map[string]*resourceapi.DeviceClass

func (l classLister) List() ([]*resourceapi.DeviceClass, error) {
	out := make([]*resourceapi.DeviceClass, 0, len(l))
	for _, c := range l {
		out = append(out, c)
	}
	return out, nil
}

func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	if c, ok := l[name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(resourceapi.Resource("deviceclass"), name)
}

// celFeatures enables in the CEL environment what the scheduler enables from the same feature gates:
// each cel.Features field EnableX follows the allocator feature X (fields differ between releases).
func celFeatures(f structured.Features) cel.Features {
	var cf cel.Features
	fv := reflect.ValueOf(f)
	cv := reflect.ValueOf(&cf).Elem()
	for i := range cv.NumField() {
		name := cv.Type().Field(i).Name
		if len(name) <= len("Enable") || name[:len("Enable")] != "Enable" || cv.Field(i).Kind() != reflect.Bool {
			continue
		}
		if src := fv.FieldByName(name[len("Enable"):]); src.IsValid() && src.Kind() == reflect.Bool {
			cv.Field(i).SetBool(src.Bool())
		}
	}
	return cf
}

// celCaches holds one compiled-expression cache per CEL feature set, shared by all scenarios of a batch
// (the scheduler, too, reuses compiled expressions across scheduling cycles). Compilation depends only on
// the expression and the feature set, so sharing cannot change a result, only skip recompiling.
var (
	celCachesMu sync.Mutex
	celCaches   = map[cel.Features]*cel.Cache{}
)

func celCacheFor(f cel.Features) *cel.Cache {
	celCachesMu.Lock()
	defer celCachesMu.Unlock()
	c, ok := celCaches[f]
	if !ok {
		c = cel.NewCache(1000, f)
		celCaches[f] = c
	}
	return c
}

func allocate(ctx context.Context, s *scenario) (out *result) {
	res := &result{Node: s.node.Name, Claims: []claimResult{}}
	defer func() {
		if r := recover(); r != nil {
			msg := fmt.Sprint(r)
			out = &result{Node: s.node.Name, Claims: []claimResult{}, Panic: &msg}
		}
	}()
	fail := func(err error) *result {
		msg := err.Error()
		res.Error = &msg
		res.FailedOnNode = failedOnNode(err)
		return res
	}
	celCache := celCacheFor(celFeatures(s.features))
	allocator, err := newAllocator(ctx, s, celCache)
	if err != nil {
		return fail(err)
	}
	allocations, err := allocator.Allocate(ctx, s.node, s.claims)
	if err != nil {
		return fail(err)
	}
	if allocations == nil || len(allocations) != len(s.claims) {
		return res
	}
	res.Allocated = true
	for i, a := range allocations {
		cr := claimResult{
			Namespace:    s.claims[i].Namespace,
			Name:         s.claims[i].Name,
			Results:      []deviceResult{},
			NodeSelector: a.NodeSelector,
			Config:       a.Devices.Config,
		}
		if cr.Config == nil {
			cr.Config = []resourceapi.DeviceAllocationConfiguration{}
		}
		for _, r := range a.Devices.Results {
			cr.Results = append(cr.Results, deviceResultOf(r, s.fixedShareID))
		}
		res.Claims = append(res.Claims, cr)
	}
	return res
}

func deviceResultOf(r resourceapi.DeviceRequestAllocationResult, fixed bool) deviceResult {
	d := deviceResult{
		Request:                  r.Request,
		Driver:                   r.Driver,
		Pool:                     r.Pool,
		Device:                   r.Device,
		AdminAccess:              r.AdminAccess != nil && *r.AdminAccess,
		Tolerations:              r.Tolerations,
		BindingConditions:        r.BindingConditions,
		BindingFailureConditions: r.BindingFailureConditions,
	}
	if r.ShareID != nil {
		d.ShareID = string(*r.ShareID)
		if fixed {
			d.ShareID = fixedShareID
		}
	}
	if len(r.ConsumedCapacity) > 0 {
		d.ConsumedCapacity = make(map[string]string, len(r.ConsumedCapacity))
		for name, q := range r.ConsumedCapacity {
			d.ConsumedCapacity[string(name)] = quantityString(q)
		}
	}
	return d
}

func quantityString(q resource.Quantity) string {
	return q.String()
}

func toUID(s string) types.UID {
	return types.UID(s)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
