--[[
  Retry a job whose attempt failed: take it out of 'active' and queue it
  again, as BullMQ does when a job fails with attempts left and no backoff.
  A job with a priority goes through addJobWithPriority, so getPriorityScore
  gives it a fresh counter: the back of its tier, not the place it had. A job
  without one goes on the wait list. Due delayed jobs are promoted first.
  Ported from BullMQ's retryJob-11, same order of the other KEYS, same replies.
  Changed: BullMQ's KEYS[4], the job hash, is not a KEYS entry here (every
  KEYS entry is a queue key that checkKeys holds to the prefix); the job hash
  is prefix .. ARGV[4], as in changePriority-7. ARGV[6] is the failure reason
  as text (BullMQ: msgpacked job fields). A negative reply writes nothing
  (BullMQ may already have promoted delayed jobs and dropped the lock).
  Not ported: the concurrency limit ('maxed'): only a paused queue leaves
  the marker alone.
  Input:
    KEYS[1]  'active'       list of jobs being processed
    KEYS[2]  'wait'         list of jobs without priority
    KEYS[3]  'paused'       (kept for BullMQ's key order, unused)
    KEYS[4]  'meta'         queue settings hash ('paused')
    KEYS[5]  'events'       events stream
    KEYS[6]  'delayed'      sorted set of delayed job ids; the due ones are promoted
    KEYS[7]  'prioritized'  sorted set of prioritized job ids
    KEYS[8]  'pc'           priority counter; an integer in 0..2^53 - 2 when it exists
    KEYS[9]  'marker'       sorted set that wakes blocked workers
    KEYS[10] 'stalled'      set of jobs suspected stalled; the job leaves it
    ARGV[1] key prefix, "emq:{queue}:"
    ARGV[2] timestamp, whole milliseconds since the epoch
    ARGV[3] "LPUSH" (back of the wait list) or "RPUSH" (front, lifo), for a job without priority
    ARGV[4] job id: an auto id, or a custom id as checkJobId allows
    ARGV[5] lock token the job was taken with, or "0" to skip the lock check
    ARGV[6] failure reason, stored as the job's 'failedReason'; "" or none leaves it alone
  Output:
    0 when done; -1 when the job does not exist; -2 when its lock is missing;
    -6 when the lock holds another token; -3 when the job is not in 'active'
    an error reply, with nothing written, when an argument is bad
]]
local rcall = redis.call
local activeKey, waitKey, metaKey, eventsKey = KEYS[1], KEYS[2], KEYS[4], KEYS[5]
local delayedKey, prioritizedKey, priorityCounterKey = KEYS[6], KEYS[7], KEYS[8]
local markerKey, stalledKey = KEYS[9], KEYS[10]
local prefix, timestamp, pushCmd, jobId, token = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local reason = ARGV[6] or ""

--- @include "includes/checkKeys"
--- @include "includes/checkTimestamp"
--- @include "includes/checkPushCmd"
--- @include "includes/checkJobId"
--- @include "includes/checkNotEmpty"
--- @include "includes/activeJobStatus"
--- @include "includes/checkStoredPriority"
--- @include "includes/checkPriorityCounter"
--- @include "includes/checkJobHash"
--- @include "includes/checkDueDelayedJobs"
--- @include "includes/promoteDelayedJobs"
--- @include "includes/isQueuePaused"
--- @include "includes/addJobInTargetList"
--- @include "includes/addJobWithPriority"
--- @include "includes/emitEvent"

-- Every check comes before the first write: a refused call changes nothing.
local dueJobs = {}
local argsError = checkKeys(prefix, {"active", "wait", "paused", "meta", "events", "delayed",
  "prioritized", "pc", "marker", "stalled"}) or checkTimestamp(timestamp) or checkPushCmd(pushCmd) or
  checkJobId(jobId, true) or checkNotEmpty("lock token", token) or checkJobHash(prefix .. jobId, "atm") or
  checkDueDelayedJobs(dueJobs, delayedKey, prefix, timestamp, priorityCounterKey)
if argsError then
  return redis.error_reply("ERR " .. argsError)
end

local jobKey = prefix .. jobId
local status = activeJobStatus(jobKey, activeKey, jobId, token)
if status ~= 0 then
  return status
end
local priority, priorityError = checkStoredPriority(jobKey)
-- its own INCR after those of the due delayed jobs promoted first
priorityError = priorityError or (priority > 0 and checkPriorityCounter(priorityCounterKey, 1 + dueJobs.scored))
if priorityError then
  return redis.error_reply("ERR " .. priorityError)
end

promoteDelayedJobs(dueJobs, delayedKey, markerKey, waitKey, prioritizedKey, eventsKey, prefix,
  priorityCounterKey, isQueuePaused(metaKey))
if token ~= "0" then
  rcall("DEL", jobKey .. ":lock")
  rcall("SREM", stalledKey, jobId)
end
if reason ~= "" then
  rcall("HSET", jobKey, "failedReason", reason)
end
rcall("LREM", activeKey, -1, jobId)
if priority == 0 then
  addJobInTargetList(waitKey, markerKey, pushCmd, isQueuePaused(metaKey), jobId)
else
  addJobWithPriority(markerKey, metaKey, prioritizedKey, priorityCounterKey, priority, jobId)
end
rcall("HINCRBY", jobKey, "atm", 1)
emitEvent(eventsKey, "waiting", jobId, "prev", "active")
return 0
