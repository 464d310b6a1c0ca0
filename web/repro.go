package web

// ReproPage is the Reproductions page: every seed, its experiments, and the
// latest reproduction of each.
type ReproPage struct {
	Seeds []ReproSeed
}

// ReproSeed is one research work.
type ReproSeed struct {
	ID, Name, Title string
	Sections        []ReproSection // none: the lab has no experiment of it yet
}

// ReproSection is one experiment and its latest reproduction in the lab.
type ReproSection struct {
	ID, Title, Claim, Reading string
	QuickOnly                 bool // in the quick set
	Runs, QuickRuns           int  // runs of the full and the quick set
	Computed                  bool // no runs: the rows are a model's, always shown

	Reproduction     string // "": never run here
	Created          string
	Quick            bool
	Done, Total      int
	Complete, Broken bool
	RunList          []ReproRun
	Figures          []ReproFigure
	Rows             []ReproRow
	Counts           string
}

// ReproRun is one underlying run.
type ReproRun struct {
	Key, Label, ID, Status string
}

// ReproFigure is a figure drawn from the finished runs.
type ReproFigure struct {
	Title, URL string
}

// ReproRow is one of the paper's numbers beside ours.
type ReproRow struct {
	Metric, Paper, Ours, Diff, Verdict, Rule, Note string
}

func (s ReproSection) inProgress() bool {
	return !s.Computed && s.Reproduction != "" && !s.Complete && !s.Broken
}

func verdictClass(v string) string {
	switch v {
	case "reproduced":
		return "verdict ok"
	case "direction only":
		return "verdict partial"
	case "not reproduced":
		return "verdict bad"
	}
	return "verdict"
}
