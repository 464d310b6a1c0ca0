package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
)

// openAPIDoc parses the embedded OpenAPI document.
func openAPIDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	return doc
}

// openAPIMethods are the operation keys of an OpenAPI path item.
var openAPIMethods = map[string]bool{
	"get": true, "put": true, "post": true, "delete": true,
	"options": true, "head": true, "patch": true, "trace": true,
}

// operation is one documented (method, path) with its OpenAPI objects.
type operation struct {
	method, path string
	item, op     map[string]any
}

func (o operation) String() string { return o.method + " " + o.path }

func operations(t *testing.T, doc map[string]any) []operation {
	t.Helper()
	paths, ok := doc["paths"].(map[string]any)
	if !ok || len(paths) == 0 {
		t.Fatal("openapi.json has no paths")
	}
	var out []operation
	for p, v := range paths {
		item, ok := v.(map[string]any)
		if !ok {
			t.Errorf("path %s: not an object", p)
			continue
		}
		for k, ov := range item {
			if !openAPIMethods[k] {
				continue
			}
			op, ok := ov.(map[string]any)
			if !ok {
				t.Errorf("%s %s: not an object", strings.ToUpper(k), p)
				continue
			}
			out = append(out, operation{method: strings.ToUpper(k), path: p, item: item, op: op})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func TestOpenAPIDocument(t *testing.T) {
	doc := openAPIDoc(t)
	version, _ := doc["openapi"].(string)
	if !strings.HasPrefix(version, "3.") {
		t.Fatalf("openapi = %q, want 3.x", version)
	}
	info, _ := doc["info"].(map[string]any)
	if info == nil || info["title"] == "" || info["version"] == nil {
		t.Errorf("info = %v, want a title and a version", info)
	}
	schemas, _ := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, name := range []string{"Error", "Run", "Scenario", "ScenarioSummary", "Validation", "Cost",
		"Change", "Progress", "Compare", "ChartSeries", "Flow"} {
		if _, ok := schemas[name]; !ok {
			t.Errorf("no component schema %s", name)
		}
	}
	ops := operations(t, doc)
	opIDs := map[string]string{}
	for _, o := range ops {
		resp, _ := o.op["responses"].(map[string]any)
		if len(resp) == 0 {
			t.Errorf("%s: no responses", o)
		}
		for code := range resp {
			if n, err := strconv.Atoi(code); code != "default" && (err != nil || n < 100 || n > 599) {
				t.Errorf("%s: response %q is not a status code", o, code)
			}
		}
		if id, _ := o.op["operationId"].(string); id != "" {
			if prev, dup := opIDs[id]; dup {
				t.Errorf("operationId %s of both %s and %s", id, prev, o)
			}
			opIDs[id] = o.String()
		}
	}
}

// TestOpenAPIRefs checks every $ref points inside the document, at
// something that exists.
func TestOpenAPIRefs(t *testing.T) {
	doc := openAPIDoc(t)
	n := 0
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"]; ok {
				n++
				s, _ := ref.(string)
				if _, err := resolveRef(doc, s); err != "" {
					t.Errorf("%s: $ref %q: %s", at, s, err)
				}
			}
			for k, x := range v {
				walk(x, at+"/"+k)
			}
		case []any:
			for i, x := range v {
				walk(x, at+"/"+strconv.Itoa(i))
			}
		}
	}
	walk(doc, "#")
	if n == 0 {
		t.Fatal("no $ref in the document")
	}
}

// resolveRef follows a local JSON pointer ("#/components/schemas/Run").
func resolveRef(doc map[string]any, ref string) (any, string) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, "not a reference inside the document"
	}
	var cur any = doc
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, "goes through a non-object"
		}
		if cur, ok = m[tok]; !ok {
			return nil, "nothing at " + tok
		}
	}
	return cur, ""
}

var templateParam = regexp.MustCompile(`\{([^}]+)\}`)

// TestOpenAPIPathParameters checks the path parameters of each template are
// declared (on the path item or the operation), and only those.
func TestOpenAPIPathParameters(t *testing.T) {
	doc := openAPIDoc(t)
	for _, o := range operations(t, doc) {
		want := map[string]bool{}
		for _, m := range templateParam.FindAllStringSubmatch(o.path, -1) {
			want[m[1]] = true
		}
		declared := map[string]bool{}
		for _, list := range []any{o.item["parameters"], o.op["parameters"]} {
			params, _ := list.([]any)
			for _, p := range params {
				pm, _ := p.(map[string]any)
				if ref, ok := pm["$ref"].(string); ok {
					v, err := resolveRef(doc, ref)
					if err != "" {
						t.Errorf("%s: parameter $ref %q: %s", o, ref, err)
						continue
					}
					pm, _ = v.(map[string]any)
				}
				if pm["in"] != "path" {
					continue
				}
				name, _ := pm["name"].(string)
				if pm["required"] != true {
					t.Errorf("%s: path parameter %q is not required", o, name)
				}
				declared[name] = true
			}
		}
		for name := range want {
			if !declared[name] {
				t.Errorf("%s: path parameter {%s} not declared", o, name)
			}
		}
		for name := range declared {
			if !want[name] {
				t.Errorf("%s: declares path parameter %q that the template lacks", o, name)
			}
		}
	}
}

var chiRegexpParam = regexp.MustCompile(`\{([^}:]+):[^}]*\}`)

// normaliseRoute turns a chi route pattern into an OpenAPI path template:
// mounted sub-routers' "/*" joins and trailing slashes dropped, a trailing
// wildcard (a file server's) written as the parameter {path}, regexp
// parameters ({id:[0-9]+}) reduced to their names.
func normaliseRoute(route string) string {
	route = strings.ReplaceAll(route, "/*/", "/")
	if strings.HasSuffix(route, "/*") {
		route = strings.TrimSuffix(route, "/*") + "/{path}"
	}
	route = chiRegexpParam.ReplaceAllString(route, "{$1}")
	if len(route) > 1 {
		route = strings.TrimSuffix(route, "/")
	}
	if route == "" {
		route = "/"
	}
	return route
}

func TestOpenAPIMatchesRoutes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/", "/"},
		{"/api/*/runs/{id}", "/api/runs/{id}"},
		{"/api/runs/", "/api/runs"},
		{"/static/*", "/static/{path}"},
		{"/api/runs/{id:[0-9a-f]+}/pin", "/api/runs/{id}/pin"},
	} {
		if got := normaliseRoute(tc.in); got != tc.want {
			t.Errorf("normaliseRoute(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}

	s := newTestServer(t, Config{})
	routes := map[string]bool{}
	err := chi.Walk(s.srv.router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		routes[method+" "+normaliseRoute(route)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) == 0 {
		t.Fatal("chi.Walk found no routes")
	}
	documented := map[string]bool{}
	for _, o := range operations(t, openAPIDoc(t)) {
		documented[o.String()] = true
	}
	var missing, extra []string
	for r := range routes {
		if !documented[r] {
			missing = append(missing, r)
		}
	}
	for d := range documented {
		if !routes[d] {
			extra = append(extra, d)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("routes missing from openapi.json:\n  %s", strings.Join(missing, "\n  "))
	}
	if len(extra) > 0 {
		t.Errorf("documented in openapi.json but not routed:\n  %s", strings.Join(extra, "\n  "))
	}
}

func TestOpenAPIServed(t *testing.T) {
	s := newTestServer(t, Config{})
	resp, err := s.ts.Client().Get(s.ts.URL + "/api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if !bytes.Equal(body, openAPI) {
		t.Errorf("served %d bytes, not the embedded document (%d bytes)", len(body), len(openAPI))
	}
}
