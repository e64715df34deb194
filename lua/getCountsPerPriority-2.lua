--[[
  Count the jobs of each asked priority. Tier p holds the scores
  p * 2^32 .. (p + 1) * 2^32 - 1; priority 0 means the 'wait' list.
  Input:
    KEYS[1] 'wait'         list of jobs without priority
    KEYS[2] 'prioritized'  sorted set of prioritized job ids
    ARGV[1..n] priorities, integers in 0..2097151 (2^21 - 1)
  Output:
    one count for each priority, in the order asked
    an error reply when a priority is bad, or KEYS are not the wait and
    prioritized keys of one queue
]]
local rcall = redis.call
local waitKey, prioritizedKey = KEYS[1], KEYS[2]

--- @include "includes/checkKeys"
--- @include "includes/checkPriority"

-- No prefix argument (ARGV holds the priorities): the queue is the one KEYS[1] names.
local prefix = string.sub(waitKey or "", 1, -5) -- all but "wait"
local keysError = checkKeys(prefix, {"wait", "prioritized"})
if keysError then
  return redis.error_reply("ERR " .. keysError)
end
local priorities = {}
for i = 1, #ARGV do
  local priority, priorityError = checkPriority(ARGV[i], 0)
  if not priority then
    return redis.error_reply("ERR " .. priorityError)
  end
  priorities[i] = priority
end

local counts = {}
for i, priority in ipairs(priorities) do
  if priority == 0 then
    counts[i] = rcall("LLEN", waitKey)
  else
    counts[i] = rcall("ZCOUNT", prioritizedKey, priority * 0x100000000,
      (priority + 1) * 0x100000000 - 1)
  end
end
return counts
