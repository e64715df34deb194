--[[
  Parse a priority argument and check its range.
  Input:
    value    the argument as received (a string)
    lowest   the smallest allowed priority (0 or 1)
    highest  the largest allowed priority; MAX_PRIORITY when nil
  Output:
    the priority as a number, or nil and an error message naming the range
]]
local MAX_PRIORITY = 2097151 -- 2^21 - 1: the largest tier whose scores are all exact

local function checkPriority(value, lowest, highest)
  highest = highest or MAX_PRIORITY
  local range = lowest .. ".." .. string.format("%d", highest)
  if highest == MAX_PRIORITY then
    range = range .. " (2^21 - 1)"
  end
  if type(value) ~= "string" or not string.match(value, "^%d+$") then
    return nil, "priority must be an integer in " .. range .. ", got '" .. tostring(value) .. "'"
  end
  local priority = tonumber(value)
  if priority < lowest or priority > highest then
    return nil, "priority must be in " .. range .. ", got " .. value
  end
  return priority
end
