--[[
  Take the id of a job being added, and tell whether it already exists.
  Input:
    idKey      the queue's 'id' counter; always incremented, as BullMQ does
    eventsKey  the queue's events stream, told of duplicates
    prefix     the key prefix "emq:{queue}:"
    customId   "" for the next counter value, else the custom id
  Output:
    jobId, jobKey, and true when that job hash exists already
]]
--- @include "emitEvent"

local function nextJobId(idKey, eventsKey, prefix, customId)
  local counter = rcall("INCR", idKey)
  local jobId = customId
  if jobId == "" then
    jobId = tostring(counter)
  end
  local jobKey = prefix .. jobId
  if rcall("EXISTS", jobKey) == 1 then
    emitEvent(eventsKey, "duplicated", jobId)
    return jobId, jobKey, true
  end
  return jobId, jobKey, false
end
