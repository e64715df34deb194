--[[
  Write a new job hash and emit the 'added' event.
  Input:
    eventsKey  the queue's events stream
    jobKey     the job hash key, prefix .. jobId
    jobId, name, data (JSON), timestamp (ms), priority (0 = none)
  Output:
    nothing
]]
--- @include "emitEvent"

local function storeJob(eventsKey, jobKey, jobId, name, data, timestamp, priority)
  local opts = cjson.encode({priority = priority})
  rcall("HSET", jobKey, "name", name, "data", data, "opts", opts,
    "timestamp", timestamp, "delay", 0, "priority", priority)
  emitEvent(eventsKey, "added", jobId, "name", name)
end
