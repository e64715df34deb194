--[[
  Check the delay of a delayed job. The 'delayed' set scores a job
  (timestamp + delay) * 0x1000 plus a sequence number below 0x1000, so the due
  time must stay below 2^41 for that score to be an exact double.
  Input:
    timestamp  the job's timestamp, already checked (whole milliseconds)
    delay      the argument as received: whole milliseconds
  Output:
    nil when it is fine, else an error message naming the range
]]
local MAX_DUE_TIME = 2199023255551 -- 2^41 - 1: (due + 1) * 0x1000 - 1 is still below 2^53

local function checkDelay(timestamp, delay)
  local highest = MAX_DUE_TIME - tonumber(timestamp)
  if highest < 1 then
    return "timestamp must be below 2^41 - 1 ms for a delayed job, got '" .. timestamp .. "'"
  end
  if not string.match(delay or "", "^%d+$") or tonumber(delay) < 1 or tonumber(delay) > highest then
    return "delay must be whole milliseconds in 1.." .. string.format("%d", highest) ..
      " (the due time stays below 2^41 ms), got '" .. tostring(delay) .. "'"
  end
  return nil
end
