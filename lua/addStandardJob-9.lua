--[[
  Add a job without priority: it goes to the 'wait' list, which a worker
  always serves before the prioritized set.
  Input:
    KEYS[1] 'wait'       list of jobs without priority (LPUSH here, RPOPLPUSH out)
    KEYS[2] 'paused'     (kept for BullMQ's key order, unused)
    KEYS[3] 'meta'       queue settings hash ('paused')
    KEYS[4] 'id'         job id counter
    KEYS[5] 'completed'  (kept for BullMQ's key order, unused)
    KEYS[6] 'delayed'    (kept for BullMQ's key order, unused)
    KEYS[7] 'active'     (kept for BullMQ's key order, unused)
    KEYS[8] 'events'     events stream
    KEYS[9] 'marker'     sorted set that wakes blocked workers
    ARGV[1] key prefix, "emq:{queue}:"
    ARGV[2] custom job id (see checkJobId), or "" for the next value of the id counter
    ARGV[3] job name, not empty
    ARGV[4] timestamp, whole milliseconds since the epoch
    ARGV[5] job data, a JSON string
  Output:
    the job id; for a custom id that exists already, that id, unchanged
    an error reply, with nothing written, when an argument is bad or the job
    would pass a cap the Redis operator set (checkJobCap)
]]
local rcall = redis.call
local waitKey, metaKey, idKey, eventsKey, markerKey = KEYS[1], KEYS[3], KEYS[4], KEYS[8], KEYS[9]
local prefix, customId, name, timestamp, data = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]

--- @include "includes/checkKeys"
--- @include "includes/checkJobArgs"
--- @include "includes/checkJobCap"
--- @include "includes/recordJobCap"
--- @include "includes/createJob"
--- @include "includes/isQueuePaused"
--- @include "includes/addBaseMarkerIfNeeded"
--- @include "includes/emitEvent"

-- Every check comes before the first write: a refused call changes nothing.
local argsError = checkKeys(prefix, {"wait", "paused", "meta", "id", "completed", "delayed", "active",
  "events", "marker"}) or checkJobArgs(customId, name, timestamp, data)
local capState
if not argsError then
  argsError, capState = checkJobCap(prefix, name, data)
end
if argsError then
  return redis.error_reply("ERR " .. argsError)
end

local jobId, _, created = createJob(idKey, eventsKey, prefix, customId, name, data, timestamp, 0)
if not created then
  return jobId
end
recordJobCap(capState)

rcall("LPUSH", waitKey, jobId)
addBaseMarkerIfNeeded(markerKey, isQueuePaused(metaKey))
emitEvent(eventsKey, "waiting", jobId)
return jobId
