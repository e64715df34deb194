--[[
  Count a job checkJobCap let in, once it was created: its queue's jobs and
  the student's total in the student's count, and what checkJobCap found of
  the others when it counted again (a queue deleted since is forgotten).
  Input:
    state  what checkJobCap returned (nil: no caps here, nothing written)
  Output:
    nothing
]]
local function recordJobCap(state)
  if not state then
    return
  end
  for field, held in pairs(state.recount or {}) do
    if held > 0 then
      rcall("HSET", state.registryKey, field, held)
    else
      rcall("HDEL", state.registryKey, field)
    end
  end
  rcall("HSET", state.registryKey, state.prefix, state.jobs, "total", state.total)
end
