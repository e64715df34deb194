--[[
  Append one event about a job to the queue's events stream, trimmed to
  about 10000 entries as BullMQ trims it.
  Input:
    eventsKey  the queue's 'events' stream
    event      the event's name, e.g. "added"
    jobId      the job's id
    ...        more field, value pairs, e.g. "prev", "waiting"
  Output:
    nothing
]]
local function emitEvent(eventsKey, event, jobId, ...)
  rcall("XADD", eventsKey, "MAXLEN", "~", 10000, "*", "event", event, "jobId", jobId, ...)
end
