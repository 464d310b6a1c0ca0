-- 0001_init.sql: the first schema of the lab's database.
--
-- Times are integers: nanoseconds since the Unix epoch (wall clock, NULL when
-- not set) or picoseconds of simulated time (columns ending in _ps). uint64
-- values (runs.seed, runs.progress_events) are stored as the int64 with the
-- same bits. JSON documents are stored as TEXT, byte for byte as given.
--
-- Runs have a public 16-hex-digit id and an integer key, rid, that every
-- table belonging to a run refers to: a series chunk row is small (tens of
-- bytes besides its data) and there are many of them, so the 17-byte text
-- key would cost more than the points of a short chunk. Deleting a run
-- deletes its rows everywhere (ON DELETE CASCADE); a scenario cannot be
-- deleted while a run refers to it.

CREATE TABLE scenarios (
    id          TEXT PRIMARY KEY,          -- ScenarioID(json)
    name        TEXT NOT NULL,
    description TEXT NOT NULL,
    json        TEXT NOT NULL,             -- canonical scenario JSON
    builtin     INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL
);

CREATE TABLE runs (
    rid                   INTEGER PRIMARY KEY,
    id                    TEXT NOT NULL UNIQUE,
    scenario_id           TEXT NOT NULL REFERENCES scenarios (id),
    name                  TEXT NOT NULL,
    algorithm             TEXT NOT NULL,
    params                TEXT,            -- effective cc params object
    seed                  INTEGER NOT NULL,
    code_version          TEXT NOT NULL,
    scenario              TEXT,            -- effective scenario JSON
    status                TEXT NOT NULL,
    error                 TEXT NOT NULL,
    client                TEXT NOT NULL,
    pinned                INTEGER NOT NULL DEFAULT 0,
    speed                 REAL NOT NULL,
    bucket_ps             INTEGER NOT NULL,
    created_at            INTEGER NOT NULL,
    started_at            INTEGER,
    finished_at           INTEGER,
    progress_fraction     REAL NOT NULL DEFAULT 0,
    progress_sim_ps       INTEGER NOT NULL DEFAULT 0,
    progress_events       INTEGER NOT NULL DEFAULT 0,
    progress_wall_seconds REAL NOT NULL DEFAULT 0,
    summary               TEXT             -- summary.json, NULL until finished
);
CREATE INDEX runs_by_created ON runs (created_at, id);
CREATE INDEX runs_by_scenario ON runs (scenario_id, created_at);
CREATE INDEX runs_by_status ON runs (status, created_at);

-- Live parameter changes of a run, numbered from 1.
CREATE TABLE run_events (
    run     INTEGER NOT NULL REFERENCES runs (rid) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    at_ps   INTEGER NOT NULL,
    params  TEXT NOT NULL,                 -- JSON object of name -> number
    wall_at INTEGER NOT NULL,
    PRIMARY KEY (run, seq)
) WITHOUT ROWID;

-- Per-flow results of a finished run.
CREATE TABLE flows (
    run       INTEGER NOT NULL REFERENCES runs (rid) ON DELETE CASCADE,
    id        INTEGER NOT NULL,
    src       TEXT NOT NULL,
    dst       TEXT NOT NULL,
    size      INTEGER NOT NULL,
    start_ps  INTEGER NOT NULL,
    finish_ps INTEGER NOT NULL,
    fct_ps    INTEGER NOT NULL,
    ideal_ps  INTEGER NOT NULL,
    started   INTEGER NOT NULL,
    finished  INTEGER NOT NULL,
    algorithm TEXT NOT NULL,
    PRIMARY KEY (run, id)
) WITHOUT ROWID;

-- The series of a run: idx is the Recorder's series index.
CREATE TABLE series (
    run    INTEGER NOT NULL REFERENCES runs (rid) ON DELETE CASCADE,
    idx    INTEGER NOT NULL,
    metric TEXT NOT NULL,
    entity TEXT NOT NULL,
    PRIMARY KEY (run, idx)
) WITHOUT ROWID;

-- Encoded points of one series at one level (0: every point, 1: decimated).
-- seq is the rowid: SQLite gives a new row a larger rowid than every row in
-- the table, so a series' chunks are in insertion (= time) order by seq.
CREATE TABLE chunks (
    seq   INTEGER PRIMARY KEY,
    run   INTEGER NOT NULL REFERENCES runs (rid) ON DELETE CASCADE,
    idx   INTEGER NOT NULL,
    level INTEGER NOT NULL,
    t0    INTEGER NOT NULL,                -- first point's time, ps
    t1    INTEGER NOT NULL,                -- last point's time, ps
    n     INTEGER NOT NULL,                -- number of points
    data  BLOB NOT NULL                    -- see encoding.go
);
-- An index entry ends with the rowid, so this index is in (run, level, idx,
-- seq) order; naming seq in it would store it twice.
CREATE INDEX chunks_by_series ON chunks (run, level, idx);
