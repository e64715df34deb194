--[[
  Compute the score of a delayed job, as BullMQ does: the due time in the high
  bits, times 0x1000, and in the low 12 bits one more than the last job due
  in the same millisecond (up to 4095), so that jobs due together keep their
  order of arrival.
  Input:
    delayedKey  the queue's 'delayed' sorted set
    timestamp   the job's timestamp (ms), checked
    delay       the delay (ms), checked with checkDelay
  Output:
    the score, and the due time in ms
]]
local function getDelayedScore(delayedKey, timestamp, delay)
  local dueTime = tonumber(timestamp) + tonumber(delay)
  local minScore = dueTime * 0x1000
  local maxScore = (dueTime + 1) * 0x1000 - 1
  local last = rcall("ZREVRANGEBYSCORE", delayedKey, maxScore, minScore, "WITHSCORES", "LIMIT", 0, 1)
  local lastScore = tonumber(last[2])
  if lastScore == nil then
    return minScore, dueTime
  end
  if lastScore >= maxScore then
    return maxScore, dueTime
  end
  return lastScore + 1, dueTime
end
