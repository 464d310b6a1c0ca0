-- A policy is a trained actor of a learned algorithm (fdcc, rlcc), stored
-- as its safetensors file: uploaded, or written by a training job of the
-- lab. A stored policy never changes; runs name it by name in cc.policy.
CREATE TABLE policies (
	id        TEXT PRIMARY KEY,
	name      TEXT NOT NULL UNIQUE,
	algorithm TEXT NOT NULL,
	created   INTEGER NOT NULL, -- unix ns
	meta      TEXT NOT NULL,    -- the file's metadata, a JSON object of strings
	source    TEXT NOT NULL,    -- a training job id, or "upload"
	size      INTEGER NOT NULL, -- bytes of data
	data      BLOB NOT NULL     -- the safetensors file
);
