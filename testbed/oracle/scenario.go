package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/structured"
	resourcedefaults "k8s.io/kubernetes/pkg/apis/resource/v1"
)

// input is one scenario as it arrives on stdin.
type input struct {
	Features                 map[string]bool              `json:"features"`
	Node                     *v1.Node                     `json:"node"`
	Slices                   []*resourceapi.ResourceSlice `json:"slices"`
	Classes                  []*resourceapi.DeviceClass   `json:"classes"`
	Claims                   []*resourceapi.ResourceClaim `json:"claims"`
	AllocatedDevices         []string                     `json:"allocatedDevices"`
	AllocatedSharedDeviceIDs []string                     `json:"allocatedSharedDeviceIDs"`
	AllocatedCapacity        map[string]map[string]string `json:"allocatedCapacity"`
	DeviceTaintRules         []taintRule                  `json:"deviceTaintRules"`
	FixedShareID             bool                         `json:"fixedShareID"`
	// NoDefaults skips the apiserver's defaulting of claims and slices (allocationMode ExactCount,
	// count 1, ...). By default the oracle sees objects as the scheduler would: as stored.
	NoDefaults bool `json:"noDefaults"`
}

// taintRule is the part of a DeviceTaintRule (v1, v1beta2 or v1alpha3: same fields) that the scheduler's
// ResourceSlice tracker uses: the driver/pool/device selector and the taint.
type taintRule struct {
	Spec struct {
		DeviceSelector *taintSelector          `json:"deviceSelector"`
		Taint          resourceapi.DeviceTaint `json:"taint"`
	} `json:"spec"`
}

// taintSelector is a DeviceTaintRule's deviceSelector.
type taintSelector struct {
	Driver *string `json:"driver"`
	Pool   *string `json:"pool"`
	Device *string `json:"device"`
}

// scenario is a decoded, checked input ready for the allocator.
type scenario struct {
	features     structured.Features
	node         *v1.Node
	slices       []*resourceapi.ResourceSlice
	classes      classLister
	claims       []*resourceapi.ResourceClaim
	state        structured.AllocatedState
	fixedShareID bool
}

func decodeBatch(data []byte) ([]*scenario, error) {
	trimmed := bytes.TrimSpace(data)
	var raws []json.RawMessage
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := json.Unmarshal(trimmed, &raws); err != nil {
			return nil, err
		}
	} else {
		// JSON lines, or any sequence of whitespace-separated documents.
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		for {
			var raw json.RawMessage
			err := dec.Decode(&raw)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("document %d: %w", len(raws)+1, err)
			}
			raws = append(raws, raw)
		}
	}
	scenarios := make([]*scenario, 0, len(raws))
	for i, raw := range raws {
		s, err := decodeScenario(raw)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		scenarios = append(scenarios, s)
	}
	return scenarios, nil
}

func decodeScenario(data []byte) (*scenario, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errEmpty
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var in input
	if err := dec.Decode(&in); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON document (use --batch)")
	}
	if in.Node == nil {
		return nil, fmt.Errorf("missing \"node\"")
	}
	s := &scenario{node: in.Node, slices: in.Slices, claims: in.Claims, fixedShareID: in.FixedShareID}
	var err error
	if s.features, err = features(in.Features); err != nil {
		return nil, err
	}
	for i, c := range in.Claims {
		if c == nil {
			return nil, fmt.Errorf("claims[%d] is null", i)
		}
		if !in.NoDefaults {
			resourcedefaults.SetObjectDefaults_ResourceClaim(c)
		}
	}
	for i, sl := range in.Slices {
		if sl == nil {
			return nil, fmt.Errorf("slices[%d] is null", i)
		}
		if !in.NoDefaults {
			resourcedefaults.SetObjectDefaults_ResourceSlice(sl)
		}
	}
	s.classes = classLister{}
	for i, c := range in.Classes {
		if c == nil {
			return nil, fmt.Errorf("classes[%d] is null", i)
		}
		s.classes[c.Name] = c
	}
	if s.state, err = allocatedState(in); err != nil {
		return nil, err
	}
	s.slices = applyTaintRules(s.slices, in.DeviceTaintRules)
	return s, nil
}

// features sets the fields of structured.Features by their Go names, so the same program builds against
// every release even though the set of fields differs between releases.
func features(named map[string]bool) (structured.Features, error) {
	var f structured.Features
	v := reflect.ValueOf(&f).Elem()
	for name, on := range named {
		fields := []string{name}
		if _, ok := v.Type().FieldByName(name); !ok && splitFeatures[name] != nil {
			fields = splitFeatures[name]
		}
		for _, field := range fields {
			sf, ok := v.Type().FieldByName(field)
			if !ok || !sf.IsExported() || sf.Type.Kind() != reflect.Bool || len(sf.Index) != 1 {
				return f, fmt.Errorf("unknown feature %q (known at this version: %s)", name, strings.Join(featureNames(), ", "))
			}
			v.Field(sf.Index[0]).SetBool(on)
		}
	}
	return f, nil
}

// splitFeatures: a feature by its newer name that an older release has as several fields, each set from one of
// the gates the newer field needs together. k8s.io/dynamic-resource-allocation v0.34 structured/internal/types.go
// has DeviceBinding (kube-scheduler: DRADeviceBindingConditions) and DeviceStatus (DRAResourceClaimDeviceStatus);
// from v0.35 they are one field, DeviceBindingAndStatus, set when both gates are on.
var splitFeatures = map[string][]string{"DeviceBindingAndStatus": {"DeviceBinding", "DeviceStatus"}}

func featureNames() []string {
	t := reflect.TypeFor[structured.Features]()
	var names []string
	for i := range t.NumField() {
		if t.Field(i).IsExported() && t.Field(i).Type.Kind() == reflect.Bool {
			names = append(names, t.Field(i).Name)
		}
	}
	sort.Strings(names)
	return names
}

func splitID(id string, parts int) ([]string, error) {
	fields := strings.Split(id, "/")
	if len(fields) != parts {
		return nil, fmt.Errorf("%q: want %d parts separated by /", id, parts)
	}
	for _, f := range fields {
		if f == "" {
			return nil, fmt.Errorf("%q: empty part", id)
		}
	}
	return fields, nil
}

func allocatedState(in input) (structured.AllocatedState, error) {
	state := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: newSharedDeviceIDs(),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, id := range in.AllocatedDevices {
		p, err := splitID(id, 3)
		if err != nil {
			return state, fmt.Errorf("allocatedDevices: %w", err)
		}
		state.AllocatedDevices.Insert(structured.MakeDeviceID(p[0], p[1], p[2]))
	}
	for _, id := range in.AllocatedSharedDeviceIDs {
		p, err := splitID(id, 4)
		if err != nil {
			return state, fmt.Errorf("allocatedSharedDeviceIDs: %w", err)
		}
		insertSharedDeviceID(&state, structured.MakeDeviceID(p[0], p[1], p[2]), p[3])
	}
	ids := make([]string, 0, len(in.AllocatedCapacity))
	for id := range in.AllocatedCapacity {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		p, err := splitID(id, 3)
		if err != nil {
			return state, fmt.Errorf("allocatedCapacity: %w", err)
		}
		consumed := map[resourceapi.QualifiedName]resource.Quantity{}
		for name, q := range in.AllocatedCapacity[id] {
			quantity, err := resource.ParseQuantity(q)
			if err != nil {
				return state, fmt.Errorf("allocatedCapacity %s %s: %w", id, name, err)
			}
			consumed[resourceapi.QualifiedName(name)] = quantity
		}
		state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(structured.MakeDeviceID(p[0], p[1], p[2]), consumed))
	}
	return state, nil
}

// nilTaintSelectorMatchesAll is how the linked k8s.io/dynamic-resource-allocation resourceslice/tracker treats
// a DeviceTaintRule without deviceSelector: up to v0.37.0 it derefs the nil selector to an empty one, which
// matches every device; from v0.37.1 "No selector matches no devices".
var nilTaintSelectorMatchesAll = linkedBefore("k8s.io/dynamic-resource-allocation", 0, 37, 1)

// linkedBefore reports whether the linked module path is older than vMAJOR.MINOR.PATCH (pre-releases of that
// patch count as older).
func linkedBefore(path string, major, minor, patch int) bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		panic("kubedra-oracle: no build info to read the linked " + path + " version from")
	}
	for _, dep := range info.Deps {
		if dep.Path != path {
			continue
		}
		v := dep.Version
		if dep.Replace != nil {
			v = dep.Replace.Version
		}
		core, pre, _ := strings.Cut(strings.TrimPrefix(v, "v"), "-")
		parts := strings.SplitN(core, ".", 3)
		if len(parts) != 3 {
			panic("kubedra-oracle: cannot read the version " + v + " of " + path)
		}
		have := [3]int{}
		for i, p := range parts {
			n, err := strconv.Atoi(p)
			if err != nil {
				panic("kubedra-oracle: cannot read the version " + v + " of " + path)
			}
			have[i] = n
		}
		want := [3]int{major, minor, patch}
		for i := range have {
			if have[i] != want[i] {
				return have[i] < want[i]
			}
		}
		return pre != ""
	}
	panic("kubedra-oracle: " + path + " is not linked")
}

// applyTaintRules adds each rule's taint to the devices it selects, in input order, the way the scheduler's
// ResourceSlice tracker patches slices: a selector field that is set must match, an unset one matches all,
// and a rule without a selector matches every device or none by the linked release
// (nilTaintSelectorMatchesAll). Slices are copied before they are changed.
func applyTaintRules(slices []*resourceapi.ResourceSlice, rules []taintRule) []*resourceapi.ResourceSlice {
	if len(rules) == 0 {
		return slices
	}
	out := make([]*resourceapi.ResourceSlice, len(slices))
	for i, slice := range slices {
		patched := slice
		for _, rule := range rules {
			sel := rule.Spec.DeviceSelector
			if sel == nil && !nilTaintSelectorMatchesAll {
				continue
			}
			if sel == nil {
				sel = &taintSelector{}
			}
			if (sel.Driver != nil && *sel.Driver != slice.Spec.Driver) ||
				(sel.Pool != nil && *sel.Pool != slice.Spec.Pool.Name) {
				continue
			}
			for d := range slice.Spec.Devices {
				if sel.Device != nil && *sel.Device != slice.Spec.Devices[d].Name {
					continue
				}
				if patched == slice {
					patched = slice.DeepCopy()
				}
				patched.Spec.Devices[d].Taints = append(patched.Spec.Devices[d].Taints, *rule.Spec.Taint.DeepCopy())
			}
		}
		out[i] = patched
	}
	return out
}
