-- Claims a flush made on an event and did not finish: incremented when a flush takes the
-- event, reset when that flush ends in any orderly way (written, dead, or deferred after a
-- failure). Only a worker that died while handling the event leaves it raised, so an event
-- that kills its worker every time is detected and goes dead instead of looping forever.
ALTER TABLE events ADD COLUMN claims integer NOT NULL DEFAULT 0;
