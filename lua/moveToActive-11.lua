--[[
  Take the next job and make it active, all in one script, so a job is never
  out of both its queue and 'active'. First, as BullMQ's moveToActive does,
  the delayed jobs due by the timestamp are promoted into their queue (a job
  with a priority is scored by getPriorityScore), even when the queue is
  paused. Then the 'wait' list (jobs without priority)
  comes first; only when it is empty does ZPOPMIN take the smallest score from
  the prioritized set. When that set is empty too, 'pc' is deleted, so arrival
  counting starts again from 1.
  Input:
    KEYS[1]  'wait'         list of jobs without priority
    KEYS[2]  'active'       list of jobs being processed
    KEYS[3]  'prioritized'  sorted set of prioritized job ids
    KEYS[4]  'events'       events stream
    KEYS[5]  'stalled'      (kept for BullMQ's key order, unused)
    KEYS[6]  'limiter'      (kept for BullMQ's key order, unused)
    KEYS[7]  'delayed'      sorted set of delayed job ids; the due ones are promoted
    KEYS[8]  'paused'       (kept for BullMQ's key order, unused)
    KEYS[9]  'meta'         queue settings hash ('paused')
    KEYS[10] 'pc'           priority counter
    KEYS[11] 'marker'       sorted set that wakes blocked workers
    ARGV[1] key prefix, "emq:{queue}:"
    ARGV[2] timestamp, whole milliseconds since the epoch
    ARGV[3] lock token, not empty
    ARGV[4] lock duration, whole milliseconds in 1..2^31 - 1
  Output:
    nil when the queue is paused or holds no job, else
    { jobId, score (the stored score as a string, or nil for a 'wait' job),
      the job hash as a flat field/value list }
    an error reply, with nothing written, when an argument is bad
]]
local rcall = redis.call
local waitKey, activeKey, prioritizedKey, eventsKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local delayedKey, metaKey, priorityCounterKey, markerKey = KEYS[7], KEYS[9], KEYS[10], KEYS[11]
local prefix, timestamp, token, lockDuration = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

--- @include "includes/isQueuePaused"
--- @include "includes/addBaseMarkerIfNeeded"
--- @include "includes/checkKeys"
--- @include "includes/checkTimestamp"
--- @include "includes/checkNotEmpty"
--- @include "includes/checkLockDuration"
--- @include "includes/emitEvent"
--- @include "includes/checkDueDelayedJobs"
--- @include "includes/promoteDelayedJobs"

-- Every check comes before the first write: a refused call changes nothing.
local dueJobs = {}
local argsError = checkKeys(prefix, {"wait", "active", "prioritized", "events", "stalled", "limiter",
  "delayed", "paused", "meta", "pc", "marker"}) or checkTimestamp(timestamp) or
  checkNotEmpty("lock token", token) or checkLockDuration(lockDuration) or
  checkDueDelayedJobs(dueJobs, delayedKey, prefix, timestamp, priorityCounterKey)
if argsError then
  return redis.error_reply("ERR " .. argsError)
end

promoteDelayedJobs(dueJobs, delayedKey, markerKey, waitKey, prioritizedKey, eventsKey, prefix,
  priorityCounterKey, isQueuePaused(metaKey))
if isQueuePaused(metaKey) then
  return nil
end

local score = false
local jobId = rcall("RPOPLPUSH", waitKey, activeKey)
if not jobId then
  local popped = rcall("ZPOPMIN", prioritizedKey)
  if #popped == 0 then
    rcall("DEL", priorityCounterKey)
    return nil
  end
  jobId, score = popped[1], popped[2]
  rcall("LPUSH", activeKey, jobId)
end

local jobKey = prefix .. jobId
rcall("SET", jobKey .. ":lock", token, "PX", lockDuration)
emitEvent(eventsKey, "active", jobId, "prev", "waiting")
rcall("HSET", jobKey, "processedOn", timestamp)
rcall("HINCRBY", jobKey, "ats", 1)
addBaseMarkerIfNeeded(markerKey, false)
return {jobId, score, rcall("HGETALL", jobKey)}
