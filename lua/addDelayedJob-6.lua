--[[
  Add a delayed job: it waits in the 'delayed' sorted set, scored
  (timestamp + delay) * 0x1000 + a sequence number (getDelayedScore), until
  the consume script (or promote) moves it into its queue. Its priority is
  stored in the job hash and scores it only then, with a fresh counter.
  Ported from BullMQ's addDelayedJob-6, same KEYS and replies. Not ported,
  as EchoMQ has none of them: parents, repeatable jobs, deduplication, and
  the 'maxLenEvents' setting (emitEvent trims to about 10000). BullMQ's
  msgpacked argument arrays are plain ARGV here, as in addPrioritizedJob-9.
  Input:
    KEYS[1] 'marker'     sorted set that wakes blocked workers; member "1" is
                         scored with the time the next delayed job is due
    KEYS[2] 'meta'       (kept for BullMQ's key order, unused)
    KEYS[3] 'id'         job id counter
    KEYS[4] 'delayed'    sorted set of delayed job ids
    KEYS[5] 'completed'  (kept for BullMQ's key order, unused)
    KEYS[6] 'events'     events stream
    ARGV[1] key prefix, "emq:{queue}:"
    ARGV[2] custom job id (see checkJobId), or "" for the next value of the id counter
    ARGV[3] job name, not empty
    ARGV[4] timestamp, whole milliseconds since the epoch
    ARGV[5] job data, a JSON string
    ARGV[6] priority, an integer in 0..2097151 (2^21 - 1); 0 = none (the wait list, once due)
    ARGV[7] delay, whole milliseconds, at least 1; timestamp + delay below 2^41
  Output:
    the job id; for a custom id that exists already, that id, unchanged
    an error reply, with nothing written, when an argument is bad or the job
    would pass a cap the Redis operator set (checkJobCap)
]]
local rcall = redis.call
local markerKey, idKey, delayedKey, eventsKey = KEYS[1], KEYS[3], KEYS[4], KEYS[6]
local prefix, customId, name, timestamp, data = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local delay = ARGV[7]

--- @include "includes/checkPriority"
--- @include "includes/checkKeys"
--- @include "includes/checkJobArgs"
--- @include "includes/checkDelay"
--- @include "includes/checkJobCap"
--- @include "includes/recordJobCap"
--- @include "includes/createJob"
--- @include "includes/getDelayedScore"
--- @include "includes/addDelayMarkerIfNeeded"
--- @include "includes/emitEvent"

-- Every check comes before the first write: a refused call changes nothing.
local priority, priorityError = checkPriority(ARGV[6], 0)
if not priority then
  return redis.error_reply("ERR " .. priorityError)
end
local argsError = checkKeys(prefix, {"marker", "meta", "id", "delayed", "completed", "events"}) or
  checkJobArgs(customId, name, timestamp, data) or checkDelay(timestamp, delay)
local capState
if not argsError then
  argsError, capState = checkJobCap(prefix, name, data)
end
if argsError then
  return redis.error_reply("ERR " .. argsError)
end

local jobId, jobKey, created = createJob(idKey, eventsKey, prefix, customId, name, data, timestamp, priority)
if created then
  recordJobCap(capState)
  -- storeJob writes delay 0 and opts {priority}; a delayed job records its delay.
  rcall("HSET", jobKey, "delay", delay, "opts", cjson.encode({priority = priority, delay = tonumber(delay)}))
  local score, dueTime = getDelayedScore(delayedKey, timestamp, delay)
  rcall("ZADD", delayedKey, score, jobId)
  emitEvent(eventsKey, "delayed", jobId, "delay", dueTime)
  addDelayMarkerIfNeeded(markerKey, delayedKey)
end
return jobId
