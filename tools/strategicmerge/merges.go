package main

// The OME merge sites, each calling strategicpatch as OME does. The sources are cited per
// function; where OME's function body is not available the function says what it follows.

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// inheritMerge is runtimeinheritance.Merge (sgl-project/ome pkg/runtimeinheritance/merge.go):
// both typed specs marshalled, JSON nulls stripped from the child, StrategicMergePatch with
// ServingRuntimeSpec as the schema.
func inheritMerge(parent, child *ServingRuntimeSpec) (*ServingRuntimeSpec, error) {
	switch {
	case parent == nil && child == nil:
		return nil, nil
	case parent == nil:
		return child, nil
	case child == nil:
		return parent, nil
	}
	parentJSON, err := json.Marshal(parent)
	if err != nil {
		return nil, fmt.Errorf("marshal parent: %w", err)
	}
	childJSON, err := json.Marshal(child)
	if err != nil {
		return nil, fmt.Errorf("marshal child: %w", err)
	}
	childJSON, err = stripJSONNulls(childJSON)
	if err != nil {
		return nil, fmt.Errorf("strip nulls from child: %w", err)
	}
	mergedJSON, err := strategicpatch.StrategicMergePatch(parentJSON, childJSON, ServingRuntimeSpec{})
	if err != nil {
		return nil, fmt.Errorf("strategic merge: %w", err)
	}
	merged := &ServingRuntimeSpec{}
	if err := json.Unmarshal(mergedJSON, merged); err != nil {
		return nil, fmt.Errorf("unmarshal merged: %w", err)
	}
	return merged, nil
}

// stripJSONNulls is runtimeinheritance.StripJSONNulls: every null-valued object key removed,
// at any depth (list items that are null stay).
func stripJSONNulls(in []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(in, &v); err != nil {
		return nil, err
	}
	return json.Marshal(stripNulls(v))
}

func stripNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			if val != nil {
				out[k] = stripNulls(val)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = stripNulls(val)
		}
		return out
	}
	return v
}

// mergeRuntimeContainers is inferenceservice/utils/merging.go MergeRuntimeContainers: the runtime
// (runner) container is the base, the predictor (pod) container the override, schema
// v1.Container; then the name falls back to the runtime's name and then to ome-container (the
// three steps TestMergeRuntimeContainers_NamePrecedence pins in ome-projects/ome), and args are
// the runtime's followed by the predictor's (the body in sgl-project/ome; the newest body is not
// in the index).
func mergeRuntimeContainers(runtimeContainer, predictorContainer *corev1.Container) (*corev1.Container, error) {
	runtimeName := runtimeContainer.Name
	base, err := json.Marshal(runtimeContainer)
	if err != nil {
		return nil, err
	}
	overrides, err := json.Marshal(predictorContainer)
	if err != nil {
		return nil, err
	}
	merged := corev1.Container{}
	out, err := strategicpatch.StrategicMergePatch(base, overrides, merged)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(out, &merged); err != nil {
		return nil, err
	}
	if merged.Name == "" {
		merged.Name = runtimeName
	}
	if merged.Name == "" {
		merged.Name = mainContainerName
	}
	merged.Args = append(append([]string{}, runtimeContainer.Args...), predictorContainer.Args...)
	return &merged, nil
}

// convertPodSpec is inferenceservice/utils ConvertPodSpec: v1beta1.PodSpec to v1.PodSpec by JSON.
func convertPodSpec(spec *PodSpec) (*corev1.PodSpec, error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var pod corev1.PodSpec
	if err := json.Unmarshal(data, &pod); err != nil {
		return nil, err
	}
	return &pod, nil
}

// reconcilePodSpec is pkg/render/podspec.go ReconcilePodSpec without the placeholder pass:
// ConvertPodSpec, then resolveContainer (the container named like the runner, else an empty
// one appended; MergeRuntimeContainers with the runner as the base), written back in place.
func reconcilePodSpec(base *PodSpec, runner *RunnerSpec) (*corev1.PodSpec, error) {
	pod, err := convertPodSpec(base)
	if err != nil {
		return nil, fmt.Errorf("failed to convert pod spec: %w", err)
	}
	if runner == nil {
		if len(pod.Containers) == 0 {
			return nil, fmt.Errorf("no containers found in pod spec and no runner spec provided")
		}
		return pod, nil
	}
	idx := -1
	for i := range pod.Containers {
		if pod.Containers[i].Name == runner.Container.Name {
			idx = i
			break
		}
	}
	if idx < 0 {
		pod.Containers = append(pod.Containers, corev1.Container{})
		idx = len(pod.Containers) - 1
	}
	merged, err := mergeRuntimeContainers(&runner.Container, &pod.Containers[idx])
	if err != nil {
		return nil, fmt.Errorf("failed to merge runner container: %w", err)
	}
	pod.Containers[idx] = *merged
	return pod, nil
}

// foldComponentPodSpecIntoLeaderWorker follows what ome-projects/ome merging_test.go pins for the
// function of that name (its body is not in the index): the component-level pod spec is the base
// and each present leader / worker pod spec the override, merged as mergeSpec merges
// (StrategicMergePatch, v1beta1.PodSpec as the schema); a nil component is a no-op.
func foldComponentPodSpecIntoLeaderWorker(component *PodSpec, leader *LeaderSpec, worker *WorkerSpec) error {
	if component == nil {
		return nil
	}
	if leader != nil {
		merged, err := mergeSpec(*component, leader.PodSpec)
		if err != nil {
			return err
		}
		leader.PodSpec = *merged
	}
	if worker != nil {
		merged, err := mergeSpec(*component, worker.PodSpec)
		if err != nil {
			return err
		}
		worker.PodSpec = *merged
	}
	return nil
}

// mergeEngineSpec is inferenceservice/utils/merging.go MergeEngineSpec: mergeSpec of the
// runtime's PodSpec, ComponentExtensionSpec, Runner, Leader and Worker (its other fields are not
// carried) under the whole isvc engine; then the leader/worker fold, on either branch
// (TestMergeEngineSpec_FoldComponentPodSpec "runtime-nil ISVC-only path also folds").
func mergeEngineSpec(runtimeEngine, isvcEngine *EngineSpec) (*EngineSpec, error) {
	var merged *EngineSpec
	switch {
	case isvcEngine == nil:
		return nil, nil
	case runtimeEngine == nil:
		merged = isvcEngine
	default:
		var err error
		merged, err = mergeSpec(EngineSpec{
			ComponentExtensionSpec: runtimeEngine.ComponentExtensionSpec,
			PodSpec:                runtimeEngine.PodSpec,
			Runner:                 runtimeEngine.Runner,
			Leader:                 runtimeEngine.Leader,
			Worker:                 runtimeEngine.Worker,
		}, *isvcEngine)
		if err != nil {
			return nil, err
		}
	}
	if err := foldComponentPodSpecIntoLeaderWorker(&merged.PodSpec, merged.Leader, merged.Worker); err != nil {
		return nil, err
	}
	return merged, nil
}

// mergeDecoderSpec is MergeDecoderSpec, the decoder twin of mergeEngineSpec.
func mergeDecoderSpec(runtimeDecoder, isvcDecoder *DecoderSpec) (*DecoderSpec, error) {
	var merged *DecoderSpec
	switch {
	case isvcDecoder == nil:
		return nil, nil
	case runtimeDecoder == nil:
		merged = isvcDecoder
	default:
		var err error
		merged, err = mergeSpec(DecoderSpec{
			ComponentExtensionSpec: runtimeDecoder.ComponentExtensionSpec,
			PodSpec:                runtimeDecoder.PodSpec,
			Runner:                 runtimeDecoder.Runner,
			Leader:                 runtimeDecoder.Leader,
			Worker:                 runtimeDecoder.Worker,
		}, *isvcDecoder)
		if err != nil {
			return nil, err
		}
	}
	if err := foldComponentPodSpecIntoLeaderWorker(&merged.PodSpec, merged.Leader, merged.Worker); err != nil {
		return nil, err
	}
	return merged, nil
}

// mergeRouterSpec is MergeRouterSpec: mergeSpec of the runtime's ComponentExtensionSpec,
// PodSpec, Runner and Config under the whole isvc router. A router has no leader or worker.
func mergeRouterSpec(isvcRouter, runtimeRouter *RouterSpec) (*RouterSpec, error) {
	switch {
	case isvcRouter == nil:
		return nil, nil
	case runtimeRouter == nil:
		return isvcRouter, nil
	}
	return mergeSpec(RouterSpec{
		ComponentExtensionSpec: runtimeRouter.ComponentExtensionSpec,
		PodSpec:                runtimeRouter.PodSpec,
		Runner:                 runtimeRouter.Runner,
		Config:                 runtimeRouter.Config,
	}, *isvcRouter)
}
