--[[
  Add a prioritized job: score it with getPriorityScore, then ZADD it to the
  prioritized set, where ZPOPMIN finds the smallest score first.
  Input:
    KEYS[1] 'marker'       sorted set that wakes blocked workers
    KEYS[2] 'meta'         queue settings hash ('paused')
    KEYS[3] 'id'           job id counter
    KEYS[4] 'prioritized'  the sorted set of prioritized job ids
    KEYS[5] 'delayed'      (kept for BullMQ's key order, unused)
    KEYS[6] 'completed'    (kept for BullMQ's key order, unused)
    KEYS[7] 'active'       (kept for BullMQ's key order, unused)
    KEYS[8] 'events'       events stream
    KEYS[9] 'pc'           priority counter, INCR'ed for the low 32 bits; an integer in
                           0..2^53 - 2 when it exists
    ARGV[1] key prefix, "emq:{queue}:"
    ARGV[2] custom job id (see checkJobId), or "" for the next value of the id counter
    ARGV[3] job name, not empty
    ARGV[4] timestamp, whole milliseconds since the epoch
    ARGV[5] job data, a JSON string
    ARGV[6] priority, an integer in 1..2097151 (2^21 - 1)
  Output:
    the job id; for a custom id that exists already, that id, unchanged
    an error reply, with nothing written, when an argument is bad or the job
    would pass a cap the Redis operator set (checkJobCap)
]]
local rcall = redis.call
local markerKey, metaKey, idKey = KEYS[1], KEYS[2], KEYS[3]
local prioritizedKey, eventsKey, priorityCounterKey = KEYS[4], KEYS[8], KEYS[9]
local prefix, customId, name, timestamp, data = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]

--- @include "includes/checkPriority"
--- @include "includes/checkKeys"
--- @include "includes/checkJobArgs"
--- @include "includes/checkPriorityCounter"
--- @include "includes/checkJobCap"
--- @include "includes/recordJobCap"
--- @include "includes/createJob"
--- @include "includes/addJobWithPriority"
--- @include "includes/emitEvent"

-- Every check comes before the first write: a refused call changes nothing.
local priority, priorityError = checkPriority(ARGV[6], 1)
if not priority then
  return redis.error_reply("ERR " .. priorityError)
end
local argsError = checkKeys(prefix, {"marker", "meta", "id", "prioritized", "delayed", "completed",
  "active", "events", "pc"}) or checkJobArgs(customId, name, timestamp, data) or
  checkPriorityCounter(priorityCounterKey)
local capState
if not argsError then
  argsError, capState = checkJobCap(prefix, name, data)
end
if argsError then
  return redis.error_reply("ERR " .. argsError)
end

local jobId, _, created = createJob(idKey, eventsKey, prefix, customId, name, data, timestamp, priority)
if not created then
  return jobId
end
recordJobCap(capState)
addJobWithPriority(markerKey, metaKey, prioritizedKey, priorityCounterKey, priority, jobId)
emitEvent(eventsKey, "waiting", jobId)
return jobId
