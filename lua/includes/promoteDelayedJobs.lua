--[[
  Move due delayed jobs into their queue, as BullMQ's promoteDelayedJobs
  does: a job with a priority is scored with getPriorityScore (a fresh
  counter: the back of its tier), a job without one goes to the back of the
  wait list. Workers are woken once, at the end.
  Input:
    dueJobs             the list checkDueDelayedJobs returned
    delayedKey, markerKey, waitKey, prioritizedKey, eventsKey  the queue's keys
    prefix              the key prefix, "emq:{queue}:"
    priorityCounterKey  the queue's 'pc' key
    isPaused            true to leave the marker alone
  Output:
    nothing
]]
--- @include "getPriorityScore"
--- @include "addBaseMarkerIfNeeded"
--- @include "emitEvent"

local function promoteDelayedJobs(dueJobs, delayedKey, markerKey, waitKey, prioritizedKey, eventsKey,
                                  prefix, priorityCounterKey, isPaused)
  if #dueJobs == 0 then
    return
  end
  for _, job in ipairs(dueJobs) do
    local jobId, priority = job[1], job[2]
    rcall("ZREM", delayedKey, jobId)
    if priority == 0 then
      rcall("LPUSH", waitKey, jobId)
    else
      rcall("ZADD", prioritizedKey, getPriorityScore(priority, priorityCounterKey), jobId)
    end
    emitEvent(eventsKey, "waiting", jobId, "prev", "delayed")
    rcall("HSET", prefix .. jobId, "delay", 0)
  end
  addBaseMarkerIfNeeded(markerKey, isPaused)
end
