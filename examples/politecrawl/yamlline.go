package main

import (
	"bytes"
	"regexp"

	"go.yaml.in/yaml/v3"
)

// yamlLineRE is the "line N: " the YAML parser puts before a syntax error.
var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line \d+: `)

// maxScanLines bounds the files whose syntax error is located by
// re-parsing (each try parses a prefix of the file).
const maxScanLines = 5000

// syntaxError turns the YAML parser's syntax error into a ConfigError at
// the line where the document stops parsing. The parser names the line
// where the enclosing structure began (a mis-indented key on line 4 of a
// mapping opened on line 1 is reported at line 1), so the line is found
// again: the first line after the longest prefix of the file that still
// parses, the fault being on it or the structure it leaves open.
func syntaxError(name string, data []byte, err error) *ConfigError {
	reason := yamlLineRE.ReplaceAllString(err.Error(), "")
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > maxScanLines {
		return &ConfigError{File: name, Reason: reason}
	}
	for j := len(lines) - 1; j >= 0; j-- {
		var n yaml.Node
		if yaml.Unmarshal(bytes.Join(lines[:j], nil), &n) == nil {
			return &ConfigError{File: name, Line: j + 1, Reason: reason}
		}
	}
	return &ConfigError{File: name, Line: 1, Reason: reason}
}
