--[[
  Tell when the next delayed job is due.
  Input:
    delayedKey  the queue's 'delayed' sorted set
  Output:
    the due time (ms, with the sequence number as a fraction), or nil when no
    job is delayed
]]
local function getNextDelayedTimestamp(delayedKey)
  local first = rcall("ZRANGE", delayedKey, 0, 0, "WITHSCORES")
  local score = tonumber(first[2])
  if score ~= nil then
    return score / 0x1000
  end
  return nil
end
