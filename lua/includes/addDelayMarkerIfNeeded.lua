--[[
  Tell blocked workers when the next delayed job is due: the marker member
  "1", scored with that time (BullMQ's workers wait until then).
  Input:
    markerKey   the queue's 'marker' sorted set
    delayedKey  the queue's 'delayed' sorted set
  Output:
    nothing
]]
--- @include "getNextDelayedTimestamp"

local function addDelayMarkerIfNeeded(markerKey, delayedKey)
  local nextTimestamp = getNextDelayedTimestamp(delayedKey)
  if nextTimestamp ~= nil then
    rcall("ZADD", markerKey, nextTimestamp, "1")
  end
end
