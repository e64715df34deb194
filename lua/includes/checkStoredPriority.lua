--[[
  Read the priority a job hash holds, and check it before anything is
  written: a job that goes back into its queue is scored from it. A job
  without the field (or without a hash) counts as priority 0, as in BullMQ.
  A key of another type is refused (checkJobHash).
  Input:
    jobKey  the job hash, prefix .. jobId
  Output:
    the priority as a number (0 = the wait list), or nil and an error message
]]
--- @include "checkPriority"
--- @include "checkJobHash"

local function checkStoredPriority(jobKey)
  local hashError = checkJobHash(jobKey)
  if hashError then
    return nil, hashError
  end
  local value = rcall("HGET", jobKey, "priority")
  if not value then
    return 0
  end
  local priority, priorityError = checkPriority(value, 0)
  if not priority then
    return nil, jobKey .. " holds a bad priority field: " .. priorityError
  end
  return priority
end
