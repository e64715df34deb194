--[[
  Check a timestamp argument: whole milliseconds since the epoch, no more than
  2^53 - 1 (the whole numbers a double keeps exact).
  Input:
    timestamp  the argument as received (a string)
  Output:
    nil when it is fine, else an error message
]]
local function checkTimestamp(timestamp)
  if not string.match(timestamp or "", "^%d+$") or tonumber(timestamp) > 9007199254740991 then
    return "timestamp must be whole milliseconds in 0..2^53 - 1, got '" .. tostring(timestamp) .. "'"
  end
  return nil
end
