--[[
  Change the priority of a job. A prioritized job is re-scored with a fresh
  counter (the back of its new tier, even when the tier is the same), or with
  lifo at priority * 2^32 exactly (the front of its new tier). Priority 0
  puts a queued job on the wait list: at its back, or with lifo at its front.
  A job in 'wait' moves to the prioritized set when given a priority. A job
  elsewhere (delayed or active, say) only has its 'priority' field updated,
  which scores it when it is queued again.
  Input:
    KEYS[1] 'wait'         list of jobs without priority
    KEYS[2] 'paused'       (kept for BullMQ's key order, unused)
    KEYS[3] 'meta'         queue settings hash ('paused')
    KEYS[4] 'prioritized'  sorted set of prioritized job ids
    KEYS[5] 'active'       (kept for BullMQ's key order, unused)
    KEYS[6] 'pc'           priority counter; an integer in 0..2^53 - 2 when it exists
    KEYS[7] 'marker'       sorted set that wakes blocked workers
    ARGV[1] new priority, an integer in 0..2097151 (2^21 - 1); 0 = none (the wait list)
    ARGV[2] key prefix, "emq:{queue}:"
    ARGV[3] job id: an auto id, or a custom id as checkJobId allows
    ARGV[4] lifo: "1" for the front of the tier (or wait list), "0" or "" for the back
  Output:
    0 when done, -1 when the job does not exist
    an error reply, with nothing written, when an argument is bad
]]
local rcall = redis.call
local waitKey, metaKey, prioritizedKey = KEYS[1], KEYS[3], KEYS[4]
local priorityCounterKey, markerKey = KEYS[6], KEYS[7]
local prefix, jobId, lifo = ARGV[2], ARGV[3], ARGV[4]

--- @include "includes/checkPriority"
--- @include "includes/checkKeys"
--- @include "includes/checkJobId"
--- @include "includes/checkLifo"
--- @include "includes/checkPriorityCounter"
--- @include "includes/checkJobHash"
--- @include "includes/isQueuePaused"
--- @include "includes/addBaseMarkerIfNeeded"
--- @include "includes/addJobInTargetList"
--- @include "includes/addJobWithPriority"

-- Every check comes before the first write: a refused call changes nothing.
local priority, priorityError = checkPriority(ARGV[1], 0)
if not priority then
  return redis.error_reply("ERR " .. priorityError)
end
local argsError = checkKeys(prefix, {"wait", "paused", "meta", "prioritized", "active", "pc",
  "marker"}) or checkJobId(jobId, true) or checkLifo(lifo) or checkPriorityCounter(priorityCounterKey) or
  checkJobHash(prefix .. jobId)
if argsError then
  return redis.error_reply("ERR " .. argsError)
end

local jobKey = prefix .. jobId
if rcall("EXISTS", jobKey) == 0 then
  return -1
end

local queued = rcall("ZREM", prioritizedKey, jobId) == 1
if not queued then
  queued = rcall("LREM", waitKey, 1, jobId) == 1
end
if queued then
  if priority == 0 then
    addJobInTargetList(waitKey, markerKey, lifo == "1" and "RPUSH" or "LPUSH", isQueuePaused(metaKey), jobId)
  elseif lifo == "1" then
    rcall("ZADD", prioritizedKey, priority * 0x100000000, jobId)
    addBaseMarkerIfNeeded(markerKey, isQueuePaused(metaKey))
  else
    addJobWithPriority(markerKey, metaKey, prioritizedKey, priorityCounterKey, priority, jobId)
  end
end
rcall("HSET", jobKey, "priority", priority)
return 0
