--[[
  Promote a delayed job now, before it is due: out of 'delayed' and into its
  queue, as the consume script does with due jobs. A job with a priority goes
  through addJobWithPriority, so getPriorityScore gives it a fresh counter:
  the back of its tier. A job without one goes to the back of the wait list.
  Ported from BullMQ's promote-9, same KEYS and replies. Not ported: the
  wait-list delay markers ("0:...") of BullMQ before v5, and the
  concurrency limit ('maxed'): only a paused queue leaves the marker alone.
  Input:
    KEYS[1] 'delayed'      the job leaves it (and must be in it: -3 otherwise)
    KEYS[2] 'wait'         a job without a priority joins it, at the back
    KEYS[3] 'paused'       not used here: it only keeps BullMQ's key order
    KEYS[4] 'meta'         read for 'paused' (a paused queue's marker is left alone)
    KEYS[5] 'prioritized'  a job with a priority joins it, at the back of its tier
    KEYS[6] 'active'       not used here: it only keeps BullMQ's key order
    KEYS[7] 'pc'           INCR'd for the job's counter; if it exists, an integer in 0..2^53 - 2
    KEYS[8] 'events'       gets a 'waiting' event, prev 'delayed'
    KEYS[9] 'marker'       wakes blocked workers once the job is ready
    ARGV[1] key prefix, "emq:{queue}:"
    ARGV[2] job id: an auto id, or a custom id as checkJobId allows
  Output:
    0 when done, -3 when the job is not in 'delayed'
    an error reply, with nothing written, when an argument is bad
]]
local rcall = redis.call
local delayedKey, waitKey, metaKey, prioritizedKey = KEYS[1], KEYS[2], KEYS[4], KEYS[5]
local priorityCounterKey, eventsKey, markerKey = KEYS[7], KEYS[8], KEYS[9]
local prefix, jobId = ARGV[1], ARGV[2]

--- @include "includes/checkKeys"
--- @include "includes/checkJobId"
--- @include "includes/checkStoredPriority"
--- @include "includes/checkPriorityCounter"
--- @include "includes/isQueuePaused"
--- @include "includes/addJobInTargetList"
--- @include "includes/addJobWithPriority"
--- @include "includes/emitEvent"

-- Every check comes before the first write: a refused call changes nothing.
local argsError = checkKeys(prefix, {"delayed", "wait", "paused", "meta", "prioritized", "active", "pc",
  "events", "marker"}) or checkJobId(jobId, true) or checkPriorityCounter(priorityCounterKey)
if argsError then
  return redis.error_reply("ERR " .. argsError)
end
if not rcall("ZSCORE", delayedKey, jobId) then
  return -3
end
local jobKey = prefix .. jobId
local priority, priorityError = checkStoredPriority(jobKey)
if not priority then
  return redis.error_reply("ERR " .. priorityError)
end

rcall("ZREM", delayedKey, jobId)
if priority == 0 then
  addJobInTargetList(waitKey, markerKey, "LPUSH", isQueuePaused(metaKey), jobId)
else
  addJobWithPriority(markerKey, metaKey, prioritizedKey, priorityCounterKey, priority, jobId)
end
emitEvent(eventsKey, "waiting", jobId, "prev", "delayed")
rcall("HSET", jobKey, "delay", 0)
return 0
