-- A sweep (issue 20) is a scenario, a grid of parameter values and a set of
-- seeds; every (point, seed) is an ordinary run, linked here. A row of
-- sweep_runs with run '' has not been submitted yet; a run deleted by
-- retention leaves its row (the sweep then shows it missing).
CREATE TABLE sweeps (
	id          TEXT PRIMARY KEY,
	name        TEXT NOT NULL,
	scenario_id TEXT NOT NULL,           -- the stored scenario it was made from
	scenario    TEXT NOT NULL,           -- that scenario's JSON, as swept
	spec        TEXT NOT NULL,           -- {"axes": [...], "seeds": [...]}
	owner       TEXT NOT NULL,
	status      TEXT NOT NULL,           -- running, done, cancelled
	created     INTEGER NOT NULL,        -- unix ns
	finished    INTEGER                  -- unix ns, NULL while running
);
CREATE INDEX sweeps_by_created ON sweeps (created, id);

CREATE TABLE sweep_runs (
	sweep TEXT NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
	point INTEGER NOT NULL,              -- grid point index (first axis slowest)
	seed  INTEGER NOT NULL,              -- index into the spec's seeds
	run   TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (sweep, point, seed)
);
CREATE INDEX sweep_runs_by_run ON sweep_runs (run);
