--[[
  Check the priority counter before anything is written: INCR must succeed
  and give a whole number a Lua double holds exactly (at most 2^53 - 1), or
  the counter part of the score, INCR pc % 2^32, would be wrong. A call that
  scores several jobs (promoting due delayed jobs) checks for all its INCRs.
  Input:
    priorityCounterKey  the queue's 'pc' key
    increments          how many INCRs the call makes (nil: one)
  Output:
    nil when it does not exist or holds an integer in 0..2^53 - 1 - increments,
    else an error message
]]
--- @include "keyTypeError"

local MAX_PRIORITY_COUNTER = 9007199254740990 -- 2^53 - 2: the next INCR gives at most 2^53 - 1

local function checkPriorityCounter(priorityCounterKey, increments)
  local count = increments or 1
  local most = MAX_PRIORITY_COUNTER - (count - 1)
  local wrongType = keyTypeError(priorityCounterKey, "string", "counter")
  if wrongType then
    return wrongType
  end
  local value = rcall("GET", priorityCounterKey)
  if not value then
    return nil
  end
  if not (value == "0" or string.match(value, "^[1-9]%d*$")) or tonumber(value) > most then
    if count == 1 then
      return priorityCounterKey .. " must hold an integer in 0..9007199254740990 (2^53 - 2), so INCR " ..
        "stays exact, got '" .. string.sub(value, 1, 40) .. "'"
    end
    return priorityCounterKey .. " must hold an integer in 0.." .. string.format("%.0f", most) ..
      " (2^53 - 1 - " .. count .. "), so the " .. count .. " INCRs of this call stay exact, got '" ..
      string.sub(value, 1, 40) .. "'"
  end
  return nil
end
