--[[
  Find the delayed jobs due by a time, and check all that promoting them
  reads, before anything is written: each job's stored priority and, when
  one of them has a priority, the priority counter. Up to 1000 jobs, the
  earliest first, as BullMQ's promoteDelayedJobs takes them.
  Input:
    delayedKey          the queue's 'delayed' sorted set
    prefix              the key prefix, "emq:{queue}:"
    timestamp           now, whole milliseconds, checked
    priorityCounterKey  the queue's 'pc' key
  Output:
    a list of {jobId, priority}, or nil and an error message
]]
--- @include "checkStoredPriority"
--- @include "checkPriorityCounter"

local function checkDueDelayedJobs(delayedKey, prefix, timestamp, priorityCounterKey)
  local jobIds = rcall("ZRANGEBYSCORE", delayedKey, 0, (tonumber(timestamp) + 1) * 0x1000 - 1,
    "LIMIT", 0, 1000)
  local due, scored = {}, false
  for i, jobId in ipairs(jobIds) do
    local priority, priorityError = checkStoredPriority(prefix .. jobId)
    if not priority then
      return nil, "delayed job " .. jobId .. ": " .. priorityError
    end
    due[i] = {jobId, priority}
    scored = scored or priority > 0
  end
  local counterError = scored and checkPriorityCounter(priorityCounterKey)
  if counterError then
    return nil, counterError
  end
  return due
end
