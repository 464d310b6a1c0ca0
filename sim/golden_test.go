package sim_test

import (
	stdbytes "bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"cclab/scenarios"
	"cclab/sim/report"
)

// Golden results, in the style of etcd raft's testdata: a handful of small
// library scenarios with their expected summary.json checked in under
// testdata/golden, so that any change of results shows up in review as a
// readable diff. The wall-clock fields are zeroed (wall_seconds,
// events_per_second) and algorithms read a scripted clock, so a summary is
// a pure function of the scenario and the code.
//
//	go test ./sim -run Golden -update   # rewrite the files after a deliberate change
var update = flag.Bool("update", false, "rewrite the golden summaries in testdata/golden")

var goldens = []struct {
	name, library, algo string
	sets                []string
}{
	{"incast-8to1-none", "incast-8to1", "", nil},
	{"incast-8to1-dcqcn", "incast-8to1", "dcqcn", nil},
	{"incast-8to1-timely", "incast-8to1", "timely", nil},
	{"fairness-2flows-hpcc", "fairness-2flows-hpcc", "", nil},
	{"mpcc-exp1", "mpcc-exp1", "", []string{"duration=1ms"}},
	{"rcc-fairness-4flows", "rcc-fairness-4flows", "", []string{"duration=2ms"}},
	{"dolce-incast-repeat", "dolce-incast-repeat", "", []string{`workload[0].repeat={"every":"500us","count":4}`}},
	{"dolceplus-dumbbell-small", "dolceplus-dumbbell", "", []string{
		"workload[0].flows[0].size=11MB", "workload[0].flows[1].size=11MB", "workload[1].until=1.5ms",
		"workload[0].flows[2].start=750us", "workload[0].flows[3].start=750us", "workload[0].flows[4].start=750us",
		"workload[0].flows[5].start=750us", "workload[0].flows[6].start=750us", "workload[0].flows[7].start=750us",
		"workload[0].flows[2].size=2.3MB", "workload[0].flows[3].size=2.3MB", "workload[0].flows[4].size=2.3MB",
		"workload[0].flows[5].size=2.3MB", "workload[0].flows[6].size=2.3MB", "workload[0].flows[7].size=2.3MB"}},
}

func TestGoldenSummaries(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			data, err := os.ReadFile("../scenarios/library/" + g.library + ".json")
			if err != nil {
				t.Fatal(err)
			}
			if len(g.sets) > 0 {
				if data, err = scenarios.ApplySets(data, g.sets); err != nil {
					t.Fatal(err)
				}
			}
			if g.algo != "" {
				if data, err = scenarios.SetAlgorithm(data, g.algo); err != nil {
					t.Fatal(err)
				}
			}
			sc, err := scenarios.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			canon, err := sc.Canonical()
			if err != nil {
				t.Fatal(err)
			}
			cfg, _, err := scenarios.Build(sc)
			if err != nil {
				t.Fatal(err)
			}
			var clock int64
			cfg.WallClock = func() int64 { clock += 1000; return clock }
			_, res := run(t, *cfg)
			var buf stdbytes.Buffer
			if err := report.WriteSummary(&buf, report.Summarize(res, json.RawMessage(canon), 0)); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", g.name+".summary.json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !stdbytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s differs from %s (go test ./sim -run Golden -update rewrites it after a deliberate change):\n%s",
					g.name, path, lineDiff(string(want), buf.String()))
			}
		})
	}
}

// lineDiff shows the first lines where two texts differ, with a line of
// context.
func lineDiff(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out strings.Builder
	shown := 0
	for i := 0; i < max(len(a), len(b)) && shown < 20; i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			out.WriteString("  line " + strconv.Itoa(i+1) + ":\n    want " + x + "\n    got  " + y + "\n")
			shown++
		}
	}
	return out.String()
}
