-- Flows keep everything the engine reports of them (sim.FlowResult): the
-- workload tag, bytes sent more than once and retransmission timeouts.
ALTER TABLE flows ADD COLUMN tag TEXT NOT NULL DEFAULT '';
ALTER TABLE flows ADD COLUMN retx INTEGER NOT NULL DEFAULT 0;
ALTER TABLE flows ADD COLUMN timeouts INTEGER NOT NULL DEFAULT 0;
