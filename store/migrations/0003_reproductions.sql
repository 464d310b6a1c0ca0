-- A reproduction is one request to run an experiment of `cclab reproduce`
-- in the lab: its runs are ordinary runs, listed here by the experiment's
-- run keys. A run deleted by retention leaves its row: the reproduction
-- then shows it missing.
CREATE TABLE reproductions (
	id         TEXT PRIMARY KEY,
	experiment TEXT NOT NULL,
	quick      INTEGER NOT NULL,
	created    INTEGER NOT NULL -- unix ns
);
CREATE INDEX reproductions_by_experiment ON reproductions (experiment, created);

CREATE TABLE reproduction_runs (
	reproduction TEXT NOT NULL REFERENCES reproductions (id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,
	key          TEXT NOT NULL,
	run          TEXT NOT NULL,
	PRIMARY KEY (reproduction, seq)
);
