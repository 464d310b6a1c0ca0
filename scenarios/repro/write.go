package repro

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// WriteDir writes report.md, report.json and one SVG per figure into dir.
func WriteDir(dir string, r *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	for _, e := range r.Experiments {
		for _, f := range e.Figures {
			if err := os.WriteFile(filepath.Join(dir, f.Name+".svg"), f.SVG(), 0o644); err != nil {
				return fmt.Errorf("reproduce: figure %s: %w", f.Name, err)
			}
		}
	}
	js, err := json.MarshalIndent(jsonReport(r), "", "  ")
	if err != nil {
		return fmt.Errorf("reproduce: report.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "report.md"))
	if err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	if err := WriteMarkdown(f, r); err != nil {
		f.Close()
		return fmt.Errorf("reproduce: report.md: %w", err)
	}
	return f.Close()
}

// jsonReport is report.json: the rows, flat (one object per row), then the
// experiments with their runs.
func jsonReport(r *Report) any {
	type exp struct {
		ExperimentReport
		Figures []string `json:"figures"`
	}
	var exps []exp
	for _, e := range r.Experiments {
		x := exp{ExperimentReport: e}
		for _, f := range e.Figures {
			x.Figures = append(x.Figures, f.Name+".svg")
		}
		x.ExperimentReport.Rows = nil
		exps = append(exps, x)
	}
	rows := r.Rows()
	if rows == nil {
		rows = []Row{}
	}
	return struct {
		Quick       bool    `json:"quick"`
		WallSeconds float64 `json:"wall_seconds"`
		Counts      Counts  `json:"counts"`
		Rows        []Row   `json:"rows"`
		Experiments []exp   `json:"experiments"`
	}{r.Quick, r.WallSeconds, Count(rows), rows, exps}
}

// Counts are how many rows have each verdict.
type Counts struct {
	Reproduced    int `json:"reproduced"`
	DirectionOnly int `json:"direction_only"`
	NotReproduced int `json:"not_reproduced"`
	NotComparable int `json:"not_comparable"`
}

// Count counts rows by verdict.
func Count(rows []Row) Counts {
	var c Counts
	for _, r := range rows {
		switch r.Verdict {
		case Reproduced:
			c.Reproduced++
		case DirectionOnly:
			c.DirectionOnly++
		case NotReproduced:
			c.NotReproduced++
		case NotComparable:
			c.NotComparable++
		}
	}
	return c
}

func mdCell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ") }

// WriteMarkdown writes report.md: per seed and experiment, the claim, our
// reading, the rows (paper, ours, difference, verdict) with their notes,
// and the figures.
func WriteMarkdown(w io.Writer, r *Report) error {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	set := "full"
	if r.Quick {
		set = "quick"
	}
	c := Count(r.Rows())
	p("# Reproductions (%s set)\n\n", set)
	p("%d rows: %d reproduced, %d direction only, %d not reproduced, %d not comparable. Wall time %.1f s.\n\n",
		len(r.Rows()), c.Reproduced, c.DirectionOnly, c.NotReproduced, c.NotComparable, r.WallSeconds)
	seed := ""
	for _, e := range r.Experiments {
		if e.Seed != seed {
			seed = e.Seed
			s := SeedOf(seed)
			p("## %s %s: %s\n\n", s.ID, s.Name, s.Title)
		}
		p("### %s — %s\n\n", e.ID, e.Title)
		p("**Paper:** %s\n\n", e.Claim)
		if e.Reading != "" {
			p("**Our reading:** %s\n\n", e.Reading)
		}
		p("| metric | paper | ours | difference | verdict | tolerance |\n|---|---|---|---|---|---|\n")
		var notes []string
		for _, row := range e.Rows {
			d := ""
			if row.Diff != nil {
				d = *row.Diff
			}
			v := string(row.Verdict)
			if row.Note != "" {
				notes = append(notes, fmt.Sprintf("%d. %s: %s", len(notes)+1, row.Metric, row.Note))
				v += fmt.Sprintf(" (%d)", len(notes))
			}
			p("| %s | %s | %s | %s | %s | %s |\n", mdCell(row.Metric), mdCell(row.Paper.String()), mdCell(row.Ours.String()),
				mdCell(d), v, mdCell(row.Rule))
		}
		p("\n")
		for _, n := range notes {
			p("%s\n", n)
		}
		if len(notes) > 0 {
			p("\n")
		}
		for _, f := range e.Figures {
			p("![%s](%s.svg)\n\n", f.Title, f.Name)
		}
		var runs []string
		for _, x := range e.Runs {
			runs = append(runs, fmt.Sprintf("`%s` (%.2f s)", x.Label, x.WallSeconds))
		}
		p("Runs: %s.\n\n", strings.Join(runs, ", "))
	}
	return nil
}
