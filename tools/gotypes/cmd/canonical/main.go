// Command canonical is the reference implementation of OME's revision payload
// and hash, used by the Python differential test (tests/differential).
//
// It reads JSON lines from stdin. A revision line is
//
//	{"id": any, "podTemplate": <PodTemplateSpec>, "workerTemplate": <PodTemplateSpec, optional>,
//	 "topologyKey": "...", "pairingProtocol": "...", "collisionCount": N, "scopeUID": "...",
//	 "excludedAnnotationKeys": ["..."]}
//
// and a value line is {"id": any, "type": "<type name>", "value": <JSON>}, which
// decodes value into the named Go type and re-encodes it with encoding/json.
//
// Templates are decoded the way Kubernetes clients decode API objects
// (sigs.k8s.io/json: case-sensitive field names, unknown fields dropped) into the
// real k8s.io/api types; the payload is encoded with encoding/json, as OME does.
// For each input line one output line is printed:
//
//	{"id": any, "payload": "<canonical bytes>", "hash": "%08x"}  or  {"id": any, "error": "..."}
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kjson "sigs.k8s.io/json"
)

// revisionPayload mirrors the struct OME hashes (01-contract.md §9.1).
type revisionPayload struct {
	PodSpec         corev1.PodSpec  `json:"podSpec"`
	PodMeta         *podMetadata    `json:"podMeta"`
	WorkerPodSpec   *corev1.PodSpec `json:"workerPodSpec,omitempty"`
	TopologyKey     string          `json:"topologyKey,omitempty"`
	PairingProtocol string          `json:"pairingProtocol,omitempty"`
}

// podMetadata is the template metadata OME hashes. It has the shape metav1.ObjectMeta
// had before apimachinery v0.35 tagged creationTimestamp omitzero: OME's golden hashes
// (01-contract.md §9.3) pin "creationTimestamp":null, which ObjectMeta itself no longer
// writes at v0.36.
type podMetadata struct {
	CreationTimestamp metav1.Time       `json:"creationTimestamp"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
}

type input struct {
	ID                     json.RawMessage `json:"id,omitempty"`
	PodTemplate            json.RawMessage `json:"podTemplate,omitempty"`
	WorkerTemplate         json.RawMessage `json:"workerTemplate,omitempty"`
	TopologyKey            string          `json:"topologyKey,omitempty"`
	PairingProtocol        string          `json:"pairingProtocol,omitempty"`
	CollisionCount         int32           `json:"collisionCount,omitempty"`
	ScopeUID               string          `json:"scopeUID,omitempty"`
	ExcludedAnnotationKeys []string        `json:"excludedAnnotationKeys,omitempty"`
	Type                   string          `json:"type,omitempty"`
	Value                  json.RawMessage `json:"value,omitempty"`
}

type output struct {
	ID      json.RawMessage `json:"id,omitempty"`
	Payload *string         `json:"payload,omitempty"`
	Hash    string          `json:"hash,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// Annotations that never feed the hash (01-contract.md §9.1).
const migrationRequestPrefix = "ome.io/migration-request-v1-"

var alwaysExcluded = map[string]bool{
	"ome.io/rollout-paused":   true,
	"ome.io/rollout-promote":  true,
	"ome.io/rollout-rollback": true,
}

func filterAnnotations(in map[string]string, excluded []string) map[string]string {
	ex := map[string]bool{}
	for _, k := range excluded {
		ex[k] = true
	}
	out := map[string]string{}
	for k, v := range in {
		if strings.HasPrefix(k, migrationRequestPrefix) || alwaysExcluded[k] || ex[k] {
			continue
		}
		out[k] = v
	}
	return out
}

func decodeTemplate(raw json.RawMessage) (*corev1.PodTemplateSpec, error) {
	var t corev1.PodTemplateSpec
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// Hash is FNV-32a over the payload, then |cc=N|, then |uid=UID|.
func Hash(raw []byte, collisionCount int32, scopeUID string) string {
	h := fnv.New32a()
	_, _ = h.Write(raw)
	_, _ = fmt.Fprintf(h, "|cc=%d|", collisionCount)
	_, _ = fmt.Fprintf(h, "|uid=%s|", scopeUID)
	return fmt.Sprintf("%08x", h.Sum32())
}

func revision(in *input) ([]byte, error) {
	leader, err := decodeTemplate(in.PodTemplate)
	if err != nil {
		return nil, fmt.Errorf("podTemplate: %w", err)
	}
	p := revisionPayload{PodSpec: leader.Spec, PairingProtocol: in.PairingProtocol}
	labels := leader.Labels
	annotations := filterAnnotations(leader.Annotations, in.ExcludedAnnotationKeys)
	if len(labels) > 0 || len(annotations) > 0 {
		meta := &podMetadata{}
		if len(labels) > 0 {
			meta.Labels = labels
		}
		if len(annotations) > 0 {
			meta.Annotations = annotations
		}
		p.PodMeta = meta
	}
	if len(in.WorkerTemplate) > 0 && string(in.WorkerTemplate) != "null" {
		worker, err := decodeTemplate(in.WorkerTemplate)
		if err != nil {
			return nil, fmt.Errorf("workerTemplate: %w", err)
		}
		p.WorkerPodSpec = &worker.Spec
		p.TopologyKey = in.TopologyKey
	}
	return json.Marshal(p)
}

func newValue(typeName string) (any, error) {
	switch typeName {
	case "core/v1.PodSpec":
		return &corev1.PodSpec{}, nil
	case "core/v1.PodTemplateSpec":
		return &corev1.PodTemplateSpec{}, nil
	case "core/v1.Container":
		return &corev1.Container{}, nil
	case "meta/v1.ObjectMeta":
		return &metav1.ObjectMeta{}, nil
	case "quantity":
		return &resource.Quantity{}, nil
	case "intorstring":
		return &intstr.IntOrString{}, nil
	case "time":
		return &metav1.Time{}, nil
	}
	return nil, fmt.Errorf("unknown type %q", typeName)
}

func value(in *input) ([]byte, error) {
	v, err := newValue(in.Type)
	if err != nil {
		return nil, err
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(in.Value, v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func process(line []byte) output {
	var in input
	if err := json.Unmarshal(line, &in); err != nil {
		return output{Error: "bad input line: " + err.Error()}
	}
	out := output{ID: in.ID}
	var raw []byte
	var err error
	if in.Type != "" {
		raw, err = value(&in)
	} else {
		raw, err = revision(&in)
	}
	if err != nil {
		out.Error = err.Error()
		return out
	}
	s := string(raw)
	out.Payload = &s
	out.Hash = Hash(raw, in.CollisionCount, in.ScopeUID)
	return out
}

func main() {
	r := bufio.NewReaderSize(os.Stdin, 1<<20)
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for {
		line, err := r.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			if encErr := enc.Encode(process(line)); encErr != nil {
				fmt.Fprintln(os.Stderr, "canonical:", encErr)
				os.Exit(1)
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "canonical:", err)
			os.Exit(1)
		}
	}
}
