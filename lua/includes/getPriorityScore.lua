--[[
  Compute the composite score of a prioritized job: the priority tier in the
  high bits, the arrival counter in the low 32 bits.
  Input:
    priority            an integer priority (lower runs first)
    priorityCounterKey  the 'pc' key; INCR gives the arrival counter
  Output:
    priority * 2^32 + (INCR pc) % 2^32, exact while priority <= 2^21 - 1
]]
local function getPriorityScore(priority, priorityCounterKey)
  local prioCounter = rcall("INCR", priorityCounterKey)
  return priority * 0x100000000 + prioCounter % 0x100000000
end
