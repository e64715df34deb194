--[[
  Parse a priority argument and check its range.
  Input:
    value   the argument as received (a string)
    lowest  the smallest allowed priority (0 or 1)
  Output:
    the priority as a number, or nil and an error message naming the range
]]
local MAX_PRIORITY = 2097151 -- 2^21 - 1: the largest tier whose scores are all exact

local function checkPriority(value, lowest)
  if type(value) ~= "string" or not string.match(value, "^%d+$") then
    return nil, "priority must be an integer in " .. lowest .. ".." .. MAX_PRIORITY ..
      ", got '" .. tostring(value) .. "'"
  end
  local priority = tonumber(value)
  if priority < lowest or priority > MAX_PRIORITY then
    return nil, "priority must be in " .. lowest .. ".." .. MAX_PRIORITY ..
      " (2^21 - 1), got " .. value
  end
  return priority
end
