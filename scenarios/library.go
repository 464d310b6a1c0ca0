package scenarios

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"
)

// The built-in scenarios.
//
//go:embed library/*.json
var libraryFiles embed.FS

// LibraryEntry is one built-in scenario.
type LibraryEntry struct {
	ID          string    // the file's base name, e.g. "incast-8to1"
	Description string    // the teaching point, one line (the scenario's description)
	Source      []byte    // the document as shipped
	Scenario    *Scenario // the parsed scenario
}

// Library returns the built-in scenarios sorted by id. The files are part of
// the program and are tested to parse and build; a broken one is a
// programming error and panics.
func Library() []LibraryEntry {
	files, err := libraryFiles.ReadDir("library")
	if err != nil {
		panic(fmt.Sprintf("scenarios: library: %v", err))
	}
	var out []LibraryEntry
	for _, f := range files {
		data, err := libraryFiles.ReadFile("library/" + f.Name())
		if err != nil {
			panic(fmt.Sprintf("scenarios: library %s: %v", f.Name(), err))
		}
		s, err := Parse(data)
		if err != nil {
			panic(fmt.Sprintf("scenarios: library %s: %v", f.Name(), err))
		}
		out = append(out, LibraryEntry{
			ID:          strings.TrimSuffix(f.Name(), path.Ext(f.Name())),
			Description: s.Description,
			Source:      data,
			Scenario:    s,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
