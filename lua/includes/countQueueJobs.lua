--[[
  Count the jobs a queue holds: in 'wait', 'prioritized', 'delayed' and
  'active' (a job leaves all four only when its queue is deleted).
  Input:
    queuePrefix  the queue's key prefix, "emq:{queue}:"
  Output:
    how many jobs it holds
]]
local function countQueueJobs(queuePrefix)
  return rcall("LLEN", queuePrefix .. "wait") + rcall("ZCARD", queuePrefix .. "prioritized") +
    rcall("ZCARD", queuePrefix .. "delayed") + rcall("LLEN", queuePrefix .. "active")
end
