// Command placeholders is the reference for OME's placeholder replacement, used by the Python
// differential test (tests/differential/test_go_placeholders.py).
//
// It reads JSON lines from stdin, each {"id": any, "meta": <ObjectMeta>, and either
// "container": <Container> or "template": "<text>"}. A container line runs OME's
// ReplacePlaceholders (pkg/controller/v1beta1/inferenceservice/utils: json.Marshal of the
// container, html/template Parse and Execute with the ObjectMeta as data, json.Unmarshal back) and
// prints {"id", "container": <the container re-marshalled>} or {"id", "error": "..."}. A template
// line parses and executes the text alone and prints {"id", "output": "..."} or {"id", "error"}.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
)

type input struct {
	ID        json.RawMessage `json:"id,omitempty"`
	Meta      json.RawMessage `json:"meta,omitempty"`
	Container json.RawMessage `json:"container,omitempty"`
	Template  *string         `json:"template,omitempty"`
}

type output struct {
	ID        json.RawMessage `json:"id,omitempty"`
	Container json.RawMessage `json:"container,omitempty"`
	Output    *string         `json:"output,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// replacePlaceholders is OME's ReplacePlaceholders, statement for statement.
func replacePlaceholders(container *corev1.Container, meta metav1.ObjectMeta) error {
	data, _ := json.Marshal(container)
	tmpl, err := template.New("container-tmpl").Parse(string(data))
	if err != nil {
		return err
	}
	buf := &bytes.Buffer{}
	err = tmpl.Execute(buf, meta)
	if err != nil {
		return err
	}
	return json.Unmarshal(buf.Bytes(), container)
}

func run(in input) output {
	out := output{ID: in.ID}
	var meta metav1.ObjectMeta
	if len(in.Meta) > 0 {
		if err := kjson.UnmarshalCaseSensitivePreserveInts(in.Meta, &meta); err != nil {
			out.Error = "bad meta: " + err.Error()
			return out
		}
	}
	if in.Template != nil {
		tmpl, err := template.New("container-tmpl").Parse(*in.Template)
		if err != nil {
			out.Error = err.Error()
			return out
		}
		buf := &bytes.Buffer{}
		if err := tmpl.Execute(buf, meta); err != nil {
			out.Error = err.Error()
			return out
		}
		text := buf.String()
		out.Output = &text
		return out
	}
	var container corev1.Container
	if err := kjson.UnmarshalCaseSensitivePreserveInts(in.Container, &container); err != nil {
		out.Error = "bad container: " + err.Error()
		return out
	}
	if err := replacePlaceholders(&container, meta); err != nil {
		out.Error = err.Error()
		return out
	}
	data, _ := json.Marshal(&container)
	out.Container = data
	return out
}

func main() {
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<26)
	enc := json.NewEncoder(os.Stdout)
	for scanner.Scan() {
		var in input
		if err := json.Unmarshal(scanner.Bytes(), &in); err != nil {
			fmt.Fprintln(os.Stderr, "bad input line:", err)
			os.Exit(2)
		}
		if err := enc.Encode(run(in)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	if err := scanner.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
