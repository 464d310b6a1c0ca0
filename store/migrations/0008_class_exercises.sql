-- For instructors (issue 21): the scenario a scenario was edited from (NULL
-- for one made from nothing, or stored before), the name a student typed for
-- a run (shown in the class view of the scenario), and pinned exercises: a
-- scenario with some fields locked and a task text. A scenario has at most
-- one exercise; copies edited from it (by parent) inherit it.
ALTER TABLE scenarios ADD COLUMN parent TEXT;
CREATE INDEX scenarios_by_parent ON scenarios (parent);
ALTER TABLE runs ADD COLUMN label TEXT NOT NULL DEFAULT '';

CREATE TABLE exercises (
	scenario_id TEXT PRIMARY KEY,
	locked      TEXT NOT NULL,           -- JSON array of field paths
	task        TEXT NOT NULL,
	owner       TEXT NOT NULL,
	created     INTEGER NOT NULL         -- unix ns
);
