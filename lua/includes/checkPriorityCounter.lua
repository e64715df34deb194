--[[
  Check the priority counter before anything is written: INCR must succeed
  and give a whole number a Lua double holds exactly (at most 2^53 - 1), or
  the counter part of the score, INCR pc % 2^32, would be wrong.
  Input:
    priorityCounterKey  the queue's 'pc' key
  Output:
    nil when it does not exist or holds an integer in 0..2^53 - 2, else an
    error message
]]
local MAX_PRIORITY_COUNTER = 9007199254740990 -- 2^53 - 2: the next INCR gives at most 2^53 - 1

local function checkPriorityCounter(priorityCounterKey)
  local keyType = rcall("TYPE", priorityCounterKey)["ok"]
  if keyType == "none" then
    return nil
  end
  if keyType ~= "string" then
    return priorityCounterKey .. " is a " .. keyType .. ", not a counter"
  end
  local value = rcall("GET", priorityCounterKey)
  if not (value == "0" or string.match(value, "^[1-9]%d*$")) or tonumber(value) > MAX_PRIORITY_COUNTER then
    return priorityCounterKey .. " must hold an integer in 0..9007199254740990 (2^53 - 2), so INCR " ..
      "stays exact, got '" .. string.sub(value, 1, 40) .. "'"
  end
  return nil
end
