// Command fieldtable prints, as JSON, the Go encoding/json view of every struct
// type reachable from k8s.io/api/core/v1.PodTemplateSpec: for each type its fields
// in declared order, with JSON name, tag options, embedding and a kind descriptor.
//
// The output is committed as schemas/k8s-go-fields.json and turned into the
// Python module omerender/_gofields.py by tools/gotypes/regen.sh.
package main

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Types with their own MarshalJSON/UnmarshalJSON. Any other type that has one
// is an error: the Python encoder would not know its wire form.
var special = map[reflect.Type]string{
	reflect.TypeOf(resource.Quantity{}):    "quantity",
	reflect.TypeOf(intstr.IntOrString{}):   "intorstring",
	reflect.TypeOf(metav1.Time{}):          "time",
	reflect.TypeOf(metav1.MicroTime{}):     "microtime",
	reflect.TypeOf(metav1.FieldsV1{}):      "fieldsv1",
	reflect.TypeOf(runtime.RawExtension{}): "rawextension",
}

// TypeRef describes the Go type of a field as encoding/json sees it.
type TypeRef struct {
	Kind string   `json:"kind"`
	Go   string   `json:"go,omitempty"`
	Ref  string   `json:"ref,omitempty"`
	Bits int      `json:"bits,omitempty"`
	Elem *TypeRef `json:"elem,omitempty"`
	Key  *TypeRef `json:"key,omitempty"`
}

// Field is one declared struct field.
type Field struct {
	GoName    string   `json:"goName"`
	JSON      string   `json:"json"`
	Omitempty bool     `json:"omitempty"`
	Omitzero  bool     `json:"omitzero"`
	AsString  bool     `json:"asString"`
	Inline    bool     `json:"inline"`
	Embedded  bool     `json:"embedded"`
	Type      *TypeRef `json:"type"`
}

// Struct is one struct type.
type Struct struct {
	Go     string  `json:"go"`
	Fields []Field `json:"fields"`
}

// Table is the whole file.
type Table struct {
	Comment         string             `json:"comment"`
	Generator       string             `json:"generator"`
	K8sAPI          string             `json:"k8sApiVersion"`
	K8sAPIMachinery string             `json:"k8sApimachineryVersion"`
	Kubernetes      string             `json:"kubernetesVersion"`
	Roots           []string           `json:"roots"`
	Specials        map[string]string  `json:"specials"`
	Types           map[string]*Struct `json:"types"`
}

var (
	jsonMarshaler   = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	jsonUnmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	textMarshaler   = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
	textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
)

func typeName(t reflect.Type) string {
	p := t.PkgPath()
	for _, pre := range []string{"k8s.io/api/", "k8s.io/apimachinery/pkg/apis/", "k8s.io/apimachinery/pkg/"} {
		if strings.HasPrefix(p, pre) {
			p = strings.TrimPrefix(p, pre)
			break
		}
	}
	return p + "." + t.Name()
}

func hasCustomJSON(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	for _, i := range []reflect.Type{jsonMarshaler, jsonUnmarshaler, textMarshaler, textUnmarshaler} {
		if t.Implements(i) || pt.Implements(i) {
			return true
		}
	}
	return false
}

type walker struct {
	types    map[string]*Struct
	specials map[string]string
}

func (w *walker) ref(t reflect.Type) *TypeRef {
	if kind, ok := special[t]; ok {
		w.specials[typeName(t)] = kind
		return &TypeRef{Kind: kind, Go: typeName(t)}
	}
	if t.Kind() != reflect.Pointer && hasCustomJSON(t) {
		fail("type %s has a custom JSON/text marshaler that the table does not know", t)
	}
	goName := t.String()
	if t.Name() != "" && t.PkgPath() != "" {
		goName = typeName(t)
	}
	switch t.Kind() {
	case reflect.String:
		return &TypeRef{Kind: "string", Go: goName}
	case reflect.Bool:
		return &TypeRef{Kind: "bool", Go: goName}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &TypeRef{Kind: "int", Go: goName, Bits: t.Bits()}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &TypeRef{Kind: "uint", Go: goName, Bits: t.Bits()}
	case reflect.Float32, reflect.Float64:
		return &TypeRef{Kind: "float", Go: goName, Bits: t.Bits()}
	case reflect.Pointer:
		return &TypeRef{Kind: "ptr", Elem: w.ref(t.Elem())}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return &TypeRef{Kind: "bytes", Go: goName}
		}
		return &TypeRef{Kind: "slice", Elem: w.ref(t.Elem())}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			fail("map %s has a non-string key", t)
		}
		return &TypeRef{Kind: "map", Key: w.ref(t.Key()), Elem: w.ref(t.Elem())}
	case reflect.Struct:
		name := typeName(t)
		w.walk(t)
		return &TypeRef{Kind: "struct", Ref: name}
	default:
		fail("unsupported kind %s for %s", t.Kind(), t)
	}
	return nil
}

func (w *walker) walk(t reflect.Type) {
	name := typeName(t)
	if _, seen := w.types[name]; seen {
		return
	}
	s := &Struct{Go: t.PkgPath() + "." + t.Name(), Fields: []Field{}}
	w.types[name] = s
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() && !sf.Anonymous {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		parts := strings.Split(tag, ",")
		f := Field{GoName: sf.Name, JSON: parts[0], Embedded: sf.Anonymous}
		for _, opt := range parts[1:] {
			switch opt {
			case "omitempty":
				f.Omitempty = true
			case "omitzero":
				f.Omitzero = true
			case "string":
				f.AsString = true
			case "inline":
				f.Inline = true
			case "":
			default:
				fail("field %s.%s has unknown json tag option %q", t, sf.Name, opt)
			}
		}
		if sf.Anonymous && !sf.IsExported() && sf.Type.Kind() != reflect.Struct {
			continue
		}
		f.Type = w.ref(sf.Type)
		s.Fields = append(s.Fields, f)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "fieldtable: "+format+"\n", args...)
	os.Exit(1)
}

func moduleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		fail("no build info; build this program in module mode")
	}
	for _, d := range info.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	fail("module %s not in build info", path)
	return ""
}

func main() {
	api := moduleVersion("k8s.io/api")
	// k8s.io/api v0.X.Y is released with Kubernetes 1.X.Y.
	kube := "1." + strings.TrimPrefix(api, "v0.")
	w := &walker{types: map[string]*Struct{}, specials: map[string]string{}}
	roots := []reflect.Type{reflect.TypeOf(corev1.PodTemplateSpec{}), reflect.TypeOf(corev1.PodSpec{})}
	var rootNames []string
	for _, r := range roots {
		w.walk(r)
		rootNames = append(rootNames, typeName(r))
	}
	sort.Strings(rootNames)
	tab := Table{
		Comment:         "Generated by tools/gotypes/regen.sh (go run ./cmd/fieldtable); do not edit.",
		Generator:       "tools/gotypes/cmd/fieldtable",
		K8sAPI:          api,
		K8sAPIMachinery: moduleVersion("k8s.io/apimachinery"),
		Kubernetes:      kube,
		Roots:           rootNames,
		Specials:        w.specials,
		Types:           w.types,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(tab); err != nil {
		fail("%v", err)
	}
	if _, err := os.Stdout.Write(buf.Bytes()); err != nil {
		fail("%v", err)
	}
}
