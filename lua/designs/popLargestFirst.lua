--[[
  DESIGN THAT FAILS (notebook 09): the consume takes the LARGEST score.
  The scores are the real ones, so ZPOPMAX serves the worst tier (the largest
  priority number) first and, inside a tier, the newest job first: last in,
  first out.
  Replaces, inside moveToActive-11.lua, the one line
    local popped = rcall("ZPOPMIN", prioritizedKey)
  with the line below; the rest of that script runs unchanged. Never loaded
  by the real script loader.
  Output:
    popped, as ZPOPMAX returns it: {} or {jobId, score}
]]
local popped = rcall("ZPOPMAX", prioritizedKey)
