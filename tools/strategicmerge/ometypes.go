package main

// OME's API types that the merges marshal and use as the patch schema, transcribed from
// ome-projects/ome pkg/apis/ome/v1beta1 (podspec.go, servingruntime_types.go,
// inference_service.go, component.go): the same JSON names, omitempty options and patch tags.
// Fields the merges never reach into are left out (supportedModelFormats, modelSizeRange,
// scalingPolicy, acceleratorRequirements, topology and accelerator overrides, autoscaling
// blocks); the differential test generates none of them, so decoding drops nothing it sends.

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// PodSpec is OME's copy of corev1.PodSpec whose containers are optional (podspec.go).
type PodSpec struct {
	Volumes                       []corev1.Volume                   `json:"volumes,omitempty" patchStrategy:"merge,retainKeys" patchMergeKey:"name"`
	InitContainers                []corev1.Container                `json:"initContainers,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	Containers                    []corev1.Container                `json:"containers,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	EphemeralContainers           []corev1.EphemeralContainer       `json:"ephemeralContainers,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	RestartPolicy                 corev1.RestartPolicy              `json:"restartPolicy,omitempty"`
	TerminationGracePeriodSeconds *int64                            `json:"terminationGracePeriodSeconds,omitempty"`
	ActiveDeadlineSeconds         *int64                            `json:"activeDeadlineSeconds,omitempty"`
	DNSPolicy                     corev1.DNSPolicy                  `json:"dnsPolicy,omitempty"`
	NodeSelector                  map[string]string                 `json:"nodeSelector,omitempty"`
	ServiceAccountName            string                            `json:"serviceAccountName,omitempty"`
	DeprecatedServiceAccount      string                            `json:"serviceAccount,omitempty"`
	AutomountServiceAccountToken  *bool                             `json:"automountServiceAccountToken,omitempty"`
	NodeName                      string                            `json:"nodeName,omitempty"`
	HostNetwork                   bool                              `json:"hostNetwork,omitempty"`
	HostPID                       bool                              `json:"hostPID,omitempty"`
	HostIPC                       bool                              `json:"hostIPC,omitempty"`
	ShareProcessNamespace         *bool                             `json:"shareProcessNamespace,omitempty"`
	SecurityContext               *corev1.PodSecurityContext        `json:"securityContext,omitempty"`
	ImagePullSecrets              []corev1.LocalObjectReference     `json:"imagePullSecrets,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	Hostname                      string                            `json:"hostname,omitempty"`
	Subdomain                     string                            `json:"subdomain,omitempty"`
	Affinity                      *corev1.Affinity                  `json:"affinity,omitempty"`
	SchedulerName                 string                            `json:"schedulerName,omitempty"`
	Tolerations                   []corev1.Toleration               `json:"tolerations,omitempty"`
	HostAliases                   []corev1.HostAlias                `json:"hostAliases,omitempty" patchStrategy:"merge" patchMergeKey:"ip"`
	PriorityClassName             string                            `json:"priorityClassName,omitempty"`
	Priority                      *int32                            `json:"priority,omitempty"`
	DNSConfig                     *corev1.PodDNSConfig              `json:"dnsConfig,omitempty"`
	ReadinessGates                []corev1.PodReadinessGate         `json:"readinessGates,omitempty"`
	RuntimeClassName              *string                           `json:"runtimeClassName,omitempty"`
	EnableServiceLinks            *bool                             `json:"enableServiceLinks,omitempty"`
	PreemptionPolicy              *corev1.PreemptionPolicy          `json:"preemptionPolicy,omitempty"`
	Overhead                      corev1.ResourceList               `json:"overhead,omitempty"`
	TopologySpreadConstraints     []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty" patchStrategy:"merge" patchMergeKey:"topologyKey"`
	SetHostnameAsFQDN             *bool                             `json:"setHostnameAsFQDN,omitempty"`
	OS                            *corev1.PodOS                     `json:"os,omitempty"`
	HostUsers                     *bool                             `json:"hostUsers,omitempty"`
	SchedulingGates               []corev1.PodSchedulingGate        `json:"schedulingGates,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	ResourceClaims                []corev1.PodResourceClaim         `json:"resourceClaims,omitempty" patchStrategy:"merge,retainKeys" patchMergeKey:"name"`
}

// ServingRuntimePodSpec (servingruntime_types.go): containers keep corev1's tag, no omitempty.
type ServingRuntimePodSpec struct {
	Containers       []corev1.Container            `json:"containers" patchStrategy:"merge" patchMergeKey:"name"`
	Volumes          []corev1.Volume               `json:"volumes,omitempty" patchStrategy:"merge,retainKeys" patchMergeKey:"name"`
	NodeSelector     map[string]string             `json:"nodeSelector,omitempty"`
	Affinity         *corev1.Affinity              `json:"affinity,omitempty"`
	Tolerations      []corev1.Toleration           `json:"tolerations,omitempty"`
	Labels           map[string]string             `json:"labels,omitempty"`
	Annotations      map[string]string             `json:"annotations,omitempty"`
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	SchedulerName    string                        `json:"schedulerName,omitempty"`
	HostIPC          bool                          `json:"hostIPC,omitempty"`
	DNSPolicy        corev1.DNSPolicy              `json:"dnsPolicy,omitempty"`
	HostNetwork      bool                          `json:"hostNetwork,omitempty"`
}

// ServingRuntimeSpec (servingruntime_types.go), without the selection-only fields.
type ServingRuntimeSpec struct {
	Disabled              *bool        `json:"disabled,omitempty"`
	RouterConfig          *RouterSpec  `json:"routerConfig,omitempty"`
	EngineConfig          *EngineSpec  `json:"engineConfig,omitempty"`
	DecoderConfig         *DecoderSpec `json:"decoderConfig,omitempty"`
	ProtocolVersions      []string     `json:"protocolVersions,omitempty"`
	ServingRuntimePodSpec `json:",inline"`
}

// ComponentExtensionSpec (component.go), the fields the merges carry as plain values.
type ComponentExtensionSpec struct {
	MinReplicas             *int                `json:"minReplicas,omitempty"`
	MaxReplicas             int                 `json:"maxReplicas,omitempty"`
	TimeoutSeconds          *int64              `json:"timeoutSeconds,omitempty"`
	Labels                  map[string]string   `json:"labels,omitempty"`
	Annotations             map[string]string   `json:"annotations,omitempty"`
	ServicePortAppProtocols map[string]string   `json:"servicePortAppProtocols,omitempty"`
	MinAvailable            *intstr.IntOrString `json:"minAvailable,omitempty"`
	MaxUnavailable          *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// RunnerSpec (inference_service.go) inlines the container.
type RunnerSpec struct {
	corev1.Container `json:",inline"`
}

// LeaderSpec (inference_service.go).
type LeaderSpec struct {
	PodSpec `json:",inline"`
	Runner  *RunnerSpec `json:"runner,omitempty"`
}

// WorkerSpec (inference_service.go).
type WorkerSpec struct {
	PodSpec `json:",inline"`
	Size    *int        `json:"size,omitempty"`
	Runner  *RunnerSpec `json:"runner,omitempty"`
}

// EngineSpec (inference_service.go), without topology and accelerator overrides.
type EngineSpec struct {
	PodSpec                `json:",inline"`
	ComponentExtensionSpec `json:",inline"`
	Runner                 *RunnerSpec `json:"runner,omitempty"`
	Leader                 *LeaderSpec `json:"leader,omitempty"`
	Worker                 *WorkerSpec `json:"worker,omitempty"`
}

// DecoderSpec (inference_service.go) has EngineSpec's shape.
type DecoderSpec struct {
	PodSpec                `json:",inline"`
	ComponentExtensionSpec `json:",inline"`
	Runner                 *RunnerSpec `json:"runner,omitempty"`
	Leader                 *LeaderSpec `json:"leader,omitempty"`
	Worker                 *WorkerSpec `json:"worker,omitempty"`
}

// RouterSpec (inference_service.go).
type RouterSpec struct {
	PodSpec                `json:",inline"`
	ComponentExtensionSpec `json:",inline"`
	Runner                 *RunnerSpec       `json:"runner,omitempty"`
	Config                 map[string]string `json:"config,omitempty"`
}
