// Package controllerconfig declares the shape of OME's DeployConfig (the "deploy" key of the
// inferenceservice-config ConfigMap) with OME's field names, types and JSON tags, under OME's package
// name, so encoding/json names the types in its errors exactly as OME's controller does
// (sigs.k8s.io/ome/pkg/controller/v1beta1/controllerconfig/configmap.go).
package controllerconfig

import "k8s.io/apimachinery/pkg/util/intstr"

type DeployConfig struct {
	DefaultDeploymentMode         string                        `json:"defaultDeploymentMode,omitempty"`
	Replicas                      *ReplicasDefaultsConfig       `json:"replicas,omitempty"`
	TerminationGracePeriodSeconds *int64                        `json:"terminationGracePeriodSeconds,omitempty"`
	MinReadySeconds               *int32                        `json:"minReadySeconds,omitempty"`
	UpdateStrategy                *UpdateStrategyDefaultsConfig `json:"updateStrategy,omitempty"`
}

type UpdateStrategyDefaultsConfig struct {
	Router  *ComponentUpdateStrategyDefaults `json:"router,omitempty"`
	Engine  *ComponentUpdateStrategyDefaults `json:"engine,omitempty"`
	Decoder *ComponentUpdateStrategyDefaults `json:"decoder,omitempty"`
}

type ComponentUpdateStrategyDefaults struct {
	Type           string              `json:"type,omitempty"`
	MaxSurge       *intstr.IntOrString `json:"maxSurge,omitempty"`
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

type ReplicasDefaultsConfig struct {
	DefaultMinReplicas *int                         `json:"defaultMinReplicas,omitempty"`
	DefaultMaxReplicas ComponentMaxReplicasDefaults `json:"defaultMaxReplicas,omitempty"`
}

type ComponentMaxReplicasDefaults struct {
	Engine  *int `json:"engine,omitempty"`
	Decoder *int `json:"decoder,omitempty"`
	Router  *int `json:"router,omitempty"`
}
