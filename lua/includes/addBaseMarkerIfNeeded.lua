--[[
  Wake blocked workers: they wait on BZPOPMIN of the marker set.
  Input:
    markerKey  the queue's 'marker' sorted set
    isPaused   true to leave the marker alone
  Output:
    nothing
]]
local function addBaseMarkerIfNeeded(markerKey, isPaused)
  if not isPaused then
    rcall("ZADD", markerKey, 0, "0")
  end
end
