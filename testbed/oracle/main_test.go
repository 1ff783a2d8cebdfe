package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

const node = `{"metadata":{"name":"n1"}}`

const slice = `{"metadata":{"name":"s"},"spec":{"driver":"gpu.example.com","pool":{"name":"n1","generation":1,"resourceSliceCount":1},
 "nodeName":"n1","devices":[{"name":"gpu-0"},{"name":"gpu-1"}]}}`

const class = `{"metadata":{"name":"gpu"},"spec":{}}`

func claim(count int) string {
	b, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"name": "c", "namespace": "ns"},
		"spec": map[string]any{"devices": map[string]any{"requests": []any{
			map[string]any{"name": "r", "exactly": map[string]any{"deviceClassName": "gpu", "count": count}},
		}}},
	})
	return string(b)
}

func doc(count int) string {
	return `{"node":` + node + `,"slices":[` + slice + `],"classes":[` + class + `],"claims":[` + claim(count) + `]}`
}

func runOracle(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestAllocatesFirstDevice(t *testing.T) {
	code, out, stderr := runOracle(t, doc(1))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if !res.Allocated || res.Error != nil || len(res.Claims) != 1 || res.Claims[0].Results[0].Device != "gpu-0" {
		t.Fatalf("unexpected result: %s", out)
	}
	if res.Claims[0].Namespace != "ns" || res.Claims[0].Results[0].Request != "r" {
		t.Fatalf("unexpected claim identity: %s", out)
	}
}

func TestUnsatisfiableIsNotAnError(t *testing.T) {
	code, out, _ := runOracle(t, doc(3))
	if code != 0 || strings.TrimSpace(out) != `{"node":"n1","allocated":false,"error":null,"claims":[]}` {
		t.Fatalf("exit %d, output %s", code, out)
	}
}

func TestBatchJSONLinesKeepsOrder(t *testing.T) {
	code, out, stderr := runOracle(t, doc(3)+"\n"+doc(2)+"\n"+doc(1), "--batch", "--workers=3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res []result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	got := []bool{res[0].Allocated, res[1].Allocated, res[2].Allocated}
	if len(res) != 3 || got[0] || !got[1] || !got[2] || len(res[1].Claims[0].Results) != 2 {
		t.Fatalf("unexpected batch result: %s", out)
	}
}

func TestMalformedInputExits2(t *testing.T) {
	for name, stdin := range map[string]string{
		"syntax":          `{`,
		"empty":           ``,
		"no node":         `{"claims":[]}`,
		"unknown feature": `{"node":` + node + `,"features":{"Teleport":true}}`,
		"two documents":   doc(1) + doc(1),
		"bad capacity":    `{"node":` + node + `,"allocatedCapacity":{"a/b/c":{"memory":"lots"}}}`,
	} {
		code, out, stderr := runOracle(t, stdin)
		if code != 2 || out != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out, stderr)
		}
	}
}

func TestFeatureNamesFollowTheLinkedRelease(t *testing.T) {
	f, err := features(map[string]bool{"PrioritizedList": true, "AdminAccess": false})
	if err != nil || !f.PrioritizedList || f.AdminAccess {
		t.Fatalf("features: %+v, %v", f, err)
	}
	if c := celFeatures(f); c.EnableConsumableCapacity {
		t.Fatalf("cel features follow allocator features: %+v", c)
	}
	f.ConsumableCapacity = true
	if c := celFeatures(f); !c.EnableConsumableCapacity {
		t.Fatalf("cel features follow allocator features: %+v", c)
	}
}

// DeviceBindingAndStatus sets the field of that name, or at v0.34 both fields it was split from.
func TestDeviceBindingAndStatusSetsTheReleasesFields(t *testing.T) {
	f, err := features(map[string]bool{"DeviceBindingAndStatus": true})
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(f)
	fields := []string{"DeviceBindingAndStatus"}
	if !v.FieldByName("DeviceBindingAndStatus").IsValid() {
		fields = splitFeatures["DeviceBindingAndStatus"]
	}
	for _, name := range fields {
		if fv := v.FieldByName(name); !fv.IsValid() || !fv.Bool() {
			t.Fatalf("%s not set: %+v", name, f)
		}
	}
}

func TestMissingClassErrsLikeTheSchedulersLister(t *testing.T) {
	// client-go's generated DeviceClass lister names the resource "deviceclass" (singular), and kube-scheduler
	// reads classes through it: the error text must be the scheduler's
	_, err := classLister{}.Get("gone")
	if err == nil || err.Error() != `deviceclass.resource.k8s.io "gone" not found` {
		t.Fatalf("unexpected error: %v", err)
	}
}
