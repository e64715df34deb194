--[[
  Tell whether a queue is paused.
  Input:
    metaKey  the queue's 'meta' hash
  Output:
    true when the hash has a 'paused' field
]]
local function isQueuePaused(metaKey)
  return rcall("HEXISTS", metaKey, "paused") == 1
end
