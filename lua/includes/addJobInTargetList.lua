--[[
  Queue a job on a list (the wait list) and wake workers.
  Input:
    targetKey  the list, e.g. the queue's 'wait' list
    markerKey  the queue's 'marker' sorted set
    pushCmd    "LPUSH" for the back of the list (the consume takes from the
               right), "RPUSH" for its front
    isPaused   true to leave the marker alone
    jobId      the job's id
  Output:
    nothing
]]
--- @include "addBaseMarkerIfNeeded"

local function addJobInTargetList(targetKey, markerKey, pushCmd, isPaused, jobId)
  rcall(pushCmd, targetKey, jobId)
  addBaseMarkerIfNeeded(markerKey, isPaused)
end
