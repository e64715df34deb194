--[[
  DESIGN THAT FAILS (notebook 09): the two keys swapped. The arrival counter
  goes in the high bits and the priority in the low 21 bits:
    score = (INCR pc % 2^32) * 2^21 + priority
  Still exact (32 + 21 = 53 bits), but the high bits decide first, so arrival
  dominates and the queue is plain first in, first out: priority only breaks
  ties that never happen.
  In place of includes/getPriorityScore.lua inside addPrioritizedJob-9.lua,
  with its arguments (the checked priority, the 'pc' key); nothing else in
  that script changes. The real script loader never reads this file.
]]
local function getPriorityScore(priority, priorityCounterKey)
  local prioCounter = rcall("INCR", priorityCounterKey)
  return (prioCounter % 0x100000000) * 0x200000 + priority
end
