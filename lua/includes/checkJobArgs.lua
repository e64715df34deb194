--[[
  Check the arguments shared by the scripts that add a job.
  Input:
    customId   "" for an automatic id, else the custom id
    name       the job name
    timestamp  milliseconds since the epoch, as a string
    data       the job data, a JSON string
  Output:
    nil when all is well, else an error message
]]
--- @include "checkJobId"
--- @include "checkNotEmpty"
--- @include "checkTimestamp"

local function checkJobArgs(customId, name, timestamp, data)
  local argError = (customId ~= "" and checkJobId(customId, false)) or
    checkNotEmpty("job name", name) or checkTimestamp(timestamp)
  if argError then
    return argError
  end
  if not pcall(cjson.decode, data or "") then
    return "job data must be a JSON string"
  end
  return nil
end
