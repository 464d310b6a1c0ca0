-- Who owns what (issue 18): the owner key of the browser or API client that
-- made a scenario, a training job or a policy ('' for those made before, and
-- for built-in scenarios: only an instructor may change them). Runs already
-- keep theirs in runs.client.
ALTER TABLE scenarios ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE train_jobs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE policies ADD COLUMN owner TEXT NOT NULL DEFAULT '';

-- The server's own settings: the key that signs owner tokens (so that they
-- outlive a restart), the instructor's featured scenarios, class limits.
CREATE TABLE settings (
	name  TEXT PRIMARY KEY,
	value BLOB NOT NULL
);
