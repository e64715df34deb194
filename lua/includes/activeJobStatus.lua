--[[
  Tell whether a job may leave 'active' on behalf of a worker: it exists, its
  lock holds the worker's token, and it is in 'active'. Reads only; the
  replies are BullMQ's.
  Input:
    jobKey     the job hash, prefix .. jobId
    activeKey  the queue's 'active' list
    jobId      the job's id
    token      the lock token the worker took the job with; "0" skips the lock check
  Output:
    0 when it may; -1 when the job does not exist; -2 when its lock is
    missing; -6 when the lock holds another token; -3 when it is not in 'active'
]]
local function activeJobStatus(jobKey, activeKey, jobId, token)
  if rcall("EXISTS", jobKey) == 0 then
    return -1
  end
  if token ~= "0" then
    local lockToken = rcall("GET", jobKey .. ":lock")
    if not lockToken then
      return -2
    elseif lockToken ~= token then
      return -6
    end
  end
  if not rcall("LPOS", activeKey, jobId) then
    return -3
  end
  return 0
end
