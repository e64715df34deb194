--[[
  Find the delayed jobs due by a time, and check all that promoting them
  reads, before anything is written: each job's stored priority and, when
  one of them has a priority, the priority counter. Up to 1000 jobs, the
  earliest first, as BullMQ's promoteDelayedJobs takes them.
  Input:
    dueJobs             an empty table, filled with {jobId, priority} pairs, and
                        dueJobs.scored: how many have a priority (each an INCR)
    delayedKey          the queue's 'delayed' sorted set
    prefix              the key prefix, "emq:{queue}:"
    timestamp           now, whole milliseconds, checked
    priorityCounterKey  the queue's 'pc' key
  Output:
    nil when all is well, else an error message
]]
--- @include "checkStoredPriority"
--- @include "checkPriorityCounter"

local function checkDueDelayedJobs(dueJobs, delayedKey, prefix, timestamp, priorityCounterKey)
  local jobIds = rcall("ZRANGEBYSCORE", delayedKey, 0, (tonumber(timestamp) + 1) * 0x1000 - 1,
    "LIMIT", 0, 1000)
  dueJobs.scored = 0
  for i, jobId in ipairs(jobIds) do
    local priority, priorityError = checkStoredPriority(prefix .. jobId)
    if not priority then
      return "delayed job " .. jobId .. ": " .. priorityError
    end
    dueJobs[i] = {jobId, priority}
    if priority > 0 then
      dueJobs.scored = dueJobs.scored + 1
    end
  end
  return dueJobs.scored > 0 and checkPriorityCounter(priorityCounterKey, dueJobs.scored) or nil
end
