--[[
  DESIGN THAT FAILS (notebook 09): the counter added without % 2^32.
    score = priority * 2^32 + INCR pc
  Fine while pc < 2^32; past it the counter carries into the tier bits: a
  priority-1 job with counter 2^32 + 5 is filed as tier 2, counter 5, behind
  every tier-2 job with a smaller counter.
  Swapped in for includes/getPriorityScore.lua, whose arguments it takes,
  inside addPrioritizedJob-9.lua; the rest of that script is unchanged, and
  the real script loader never reads this file.
]]
local function getPriorityScore(priority, priorityCounterKey)
  local prioCounter = rcall("INCR", priorityCounterKey)
  return priority * 0x100000000 + prioCounter
end
