--[[
  File a job in the prioritized set at its composite score, and wake workers.
  Input:
    markerKey, metaKey, prioritizedKey, priorityCounterKey  the queue's keys
    priority  the job's priority, already checked
    jobId     the job's id
  Output:
    nothing
]]
--- @include "getPriorityScore"
--- @include "isQueuePaused"
--- @include "addBaseMarkerIfNeeded"

local function addJobWithPriority(markerKey, metaKey, prioritizedKey, priorityCounterKey,
                                  priority, jobId)
  local score = getPriorityScore(priority, priorityCounterKey)
  rcall("ZADD", prioritizedKey, score, jobId)
  addBaseMarkerIfNeeded(markerKey, isQueuePaused(metaKey))
end
