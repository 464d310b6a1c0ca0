-- The lab server's training jobs, kept so that they outlive the process
-- that ran them: a job a process left queued or running is marked
-- interrupted when the next one starts (and can be resumed from its
-- checkpoint, when it has one).
CREATE TABLE train_jobs (
	id          TEXT PRIMARY KEY,
	name        TEXT NOT NULL,              -- the name its policy is stored under
	algorithm   TEXT NOT NULL,
	config      TEXT NOT NULL,              -- the training configuration (JSON)
	status      TEXT NOT NULL,              -- queued, running, done, cancelled, interrupted, failed
	error       TEXT NOT NULL DEFAULT '',
	created     INTEGER NOT NULL,           -- unix ns
	started     INTEGER,                    -- unix ns, NULL until it starts
	finished    INTEGER,                    -- unix ns, NULL until it ends
	episode     INTEGER NOT NULL DEFAULT 0, -- episodes played
	stage       INTEGER NOT NULL DEFAULT 0, -- the curriculum's newest fan-in
	policy      TEXT NOT NULL DEFAULT '',   -- the policy it stored (its id)
	interrupted INTEGER NOT NULL DEFAULT 0  -- that policy is what it learned before it was stopped
);
CREATE INDEX train_jobs_by_created ON train_jobs (created, id);

-- The learning curve of a job: one JSON point per training round, in order.
CREATE TABLE train_points (
	job   TEXT NOT NULL REFERENCES train_jobs (id) ON DELETE CASCADE,
	seq   INTEGER NOT NULL,
	point TEXT NOT NULL,
	PRIMARY KEY (job, seq)
);
