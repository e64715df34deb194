--[[
  Check a lock duration argument: whole milliseconds in 1..2^31 - 1, far
  from what SET PX accepts, so the lock is never refused after the job has
  left its queue.
  Input:
    value  the argument as received (a string)
  Output:
    nil when it is fine, else an error message
]]
local function checkLockDuration(value)
  if not string.match(value or "", "^%d+$") or tonumber(value) < 1 or tonumber(value) > 2147483647 then
    return "lock duration must be whole milliseconds in 1..2147483647, got '" .. tostring(value) .. "'"
  end
  return nil
end
