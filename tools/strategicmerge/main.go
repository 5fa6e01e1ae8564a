// Command strategicmerge is the reference implementation of OME's strategic merges, used by the
// Python differential test tests/differential/test_strategic_merge_oracle.py.
//
// It applies k8s.io/apimachinery's strategicpatch exactly the way each OME merge site calls it,
// with the Go type each site passes as the patch schema. OME's own API types are not importable
// from the module proxy, so the ones the merges use are transcribed in omeTypes.go (field names,
// JSON tags and patch tags of ome-projects/ome pkg/apis/ome/v1beta1); the Kubernetes types are
// the real k8s.io/api ones.
//
// Protocol: JSON lines on stdin, one answer line on stdout per input line, in order:
//
//	{"id": any, "op": "<op>", "a": <JSON>, "b": <JSON>}
//	-> {"id": any, "result": <JSON>}   or   {"id": any, "error": "<text>"}
//
// Inputs are decoded into the typed structs the way a Kubernetes client decodes API objects
// (sigs.k8s.io/json: case-sensitive, unknown fields dropped); a JSON null is a nil pointer.
// Results are the typed structs re-encoded with encoding/json. Ops:
//
//	canon:<type>  a decoded into <type> and re-encoded (used to compare the Python result)
//	inherit       runtimeinheritance.Merge(parent=a, child=b), both ServingRuntimeSpec
//	runner        PodSpecReconciler.resolveContainer: a is the piece's v1beta1.PodSpec, b its
//	              RunnerSpec (or null); the result is the core v1.PodSpec after the merge
//	engine        MergeEngineSpec(runtime=a, isvc=b), EngineSpec
//	decoder       MergeDecoderSpec(runtime=a, isvc=b), DecoderSpec
//	router        MergeRouterSpec(isvc=b, runtime=a), RouterSpec
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	kjson "sigs.k8s.io/json"
)

// mainContainerName is OME's constants.MainContainerName.
const mainContainerName = "ome-container"

type request struct {
	ID json.RawMessage `json:"id"`
	Op string          `json:"op"`
	A  json.RawMessage `json:"a"`
	B  json.RawMessage `json:"b"`
}

type answer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// decode reads raw into a new T; a JSON null (or nothing) is a nil pointer.
func decode[T any](raw json.RawMessage) (*T, error) {
	if isNull(raw) {
		return nil, nil
	}
	out := new(T)
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, out); err != nil {
		return nil, err
	}
	return out, nil
}

func canon[T any](raw json.RawMessage) (any, error) {
	v, err := decode[T](raw)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// mergeSpec is OME's inferenceservice/utils/merging.go mergeSpec: both sides marshalled,
// StrategicMergePatch with the zero T as the schema, the result unmarshalled into T.
func mergeSpec[T any](base, override T) (*T, error) {
	baseJSON, err := json.Marshal(base)
	if err != nil {
		return nil, err
	}
	overrideJSON, err := json.Marshal(override)
	if err != nil {
		return nil, err
	}
	var merged T
	out, err := strategicpatch.StrategicMergePatch(baseJSON, overrideJSON, merged)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(out, &merged); err != nil {
		return nil, err
	}
	return &merged, nil
}

func run(req request) (any, error) {
	switch req.Op {
	case "canon:container":
		return canon[corev1.Container](req.A)
	case "canon:podspec":
		return canon[corev1.PodSpec](req.A)
	case "canon:runtime":
		return canon[ServingRuntimeSpec](req.A)
	case "canon:engine":
		return canon[EngineSpec](req.A)
	case "canon:decoder":
		return canon[DecoderSpec](req.A)
	case "canon:router":
		return canon[RouterSpec](req.A)
	case "inherit":
		parent, err := decode[ServingRuntimeSpec](req.A)
		if err != nil {
			return nil, fmt.Errorf("decode parent: %w", err)
		}
		child, err := decode[ServingRuntimeSpec](req.B)
		if err != nil {
			return nil, fmt.Errorf("decode child: %w", err)
		}
		return inheritMerge(parent, child)
	case "runner":
		pod, err := decode[PodSpec](req.A)
		if err != nil {
			return nil, fmt.Errorf("decode pod: %w", err)
		}
		if pod == nil {
			pod = &PodSpec{}
		}
		runner, err := decode[RunnerSpec](req.B)
		if err != nil {
			return nil, fmt.Errorf("decode runner: %w", err)
		}
		return reconcilePodSpec(pod, runner)
	case "engine":
		rt, err := decode[EngineSpec](req.A)
		if err != nil {
			return nil, fmt.Errorf("decode runtime engine: %w", err)
		}
		isvc, err := decode[EngineSpec](req.B)
		if err != nil {
			return nil, fmt.Errorf("decode isvc engine: %w", err)
		}
		return mergeEngineSpec(rt, isvc)
	case "decoder":
		rt, err := decode[DecoderSpec](req.A)
		if err != nil {
			return nil, fmt.Errorf("decode runtime decoder: %w", err)
		}
		isvc, err := decode[DecoderSpec](req.B)
		if err != nil {
			return nil, fmt.Errorf("decode isvc decoder: %w", err)
		}
		return mergeDecoderSpec(rt, isvc)
	case "router":
		rt, err := decode[RouterSpec](req.A)
		if err != nil {
			return nil, fmt.Errorf("decode runtime router: %w", err)
		}
		isvc, err := decode[RouterSpec](req.B)
		if err != nil {
			return nil, fmt.Errorf("decode isvc router: %w", err)
		}
		return mergeRouterSpec(isvc, rt)
	}
	return nil, fmt.Errorf("unknown op %q", req.Op)
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			var req request
			ans := answer{}
			if jerr := json.Unmarshal(line, &req); jerr != nil {
				ans.Error = "bad request: " + jerr.Error()
			} else {
				ans.ID = req.ID
				result, rerr := run(req)
				if rerr != nil {
					ans.Error = rerr.Error()
				} else if raw, merr := json.Marshal(result); merr != nil {
					ans.Error = "marshal result: " + merr.Error()
				} else {
					ans.Result = raw
				}
			}
			if eerr := enc.Encode(ans); eerr != nil {
				fmt.Fprintln(os.Stderr, eerr)
				os.Exit(1)
			}
		}
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
