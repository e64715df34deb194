--[[
  DESIGN THAT FAILS (notebook 09): a millisecond timestamp instead of INCR.
    score = priority * 2^32 + timestamp % 2^32
  The client's clock is not an arrival counter: two jobs in the same
  millisecond get the same score and Redis orders them by the bytes of their
  ids; two clients whose clocks disagree file their jobs in the order of
  their clocks, not of their arrival; and 2^32 ms is about 49.7 days, after
  which the low 32 bits wrap to 0 and the newest jobs jump ahead.
  Swapped in for includes/getPriorityScore.lua inside addPrioritizedJob-9.lua;
  it takes the same arguments but leaves 'pc' alone and reads ARGV[4], the
  timestamp, which checkJobArgs has checked before. The rest of that script
  is unchanged; the real script loader never reads this file.
]]
local function getPriorityScore(priority, priorityCounterKey)
  local milliseconds = tonumber(ARGV[4])
  return priority * 0x100000000 + milliseconds % 0x100000000
end
