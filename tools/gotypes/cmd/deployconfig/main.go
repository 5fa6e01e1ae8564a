// Command deployconfig decodes the "deploy" key of inferenceservice-config as OME's parseDeployConfig
// does (json.Unmarshal into a **DeployConfig), for the Python differential test
// (tests/differential/test_go_deployconfig.py). Each stdin line is {"id": any, "deploy": "<text>"}; each
// output line is {"id", "error": "<encoding/json's error>"} or {"id"} when it decodes.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/omerender/omerender/tools/gotypes/controllerconfig"
)

type input struct {
	ID     json.RawMessage `json:"id"`
	Deploy string          `json:"deploy"`
}

type output struct {
	ID    json.RawMessage `json:"id"`
	Error string          `json:"error,omitempty"`
}

func main() {
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	enc := json.NewEncoder(os.Stdout)
	for scanner.Scan() {
		var in input
		if err := json.Unmarshal(scanner.Bytes(), &in); err != nil {
			fmt.Fprintln(os.Stderr, "bad input line:", err)
			os.Exit(2)
		}
		deployConfig := &controllerconfig.DeployConfig{}
		out := output{ID: in.ID}
		if err := json.Unmarshal([]byte(in.Deploy), &deployConfig); err != nil {
			out.Error = err.Error()
		}
		if err := enc.Encode(out); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
}
