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
--- @include "checkTimestamp"
local function checkJobArgs(customId, name, timestamp, data)
  if customId ~= "" then
    if string.match(customId, "^%d+$") then
      return "custom job id must not be a plain integer, got '" .. customId .. "'"
    end
    if string.find(customId, "[{}:]") then
      return "custom job id must not contain '{', '}' or ':', got '" .. customId .. "'"
    end
  end
  if name == nil or name == "" then
    return "job name must not be empty"
  end
  local timestampError = checkTimestamp(timestamp)
  if timestampError then
    return timestampError
  end
  if not pcall(cjson.decode, data or "") then
    return "job data must be a JSON string"
  end
  return nil
end
