--[[
  Check a job's hash before anything is written: it must be a hash or not
  exist (a key of another type, written by hand, would make HSET fail after
  the script's first writes), and a counter field the script increments must
  hold an integer HINCRBY can take one more of.
  Input:
    jobKey        the job hash, prefix .. jobId
    counterField  the field the script HINCRBYs ("atm"), or nil
  Output:
    nil when all is well, else an error message
]]
--- @include "keyTypeError"

local function checkJobHash(jobKey, counterField)
  local wrongType = keyTypeError(jobKey, "hash", "job hash")
  if wrongType then
    return wrongType
  end
  if counterField then
    local value = rcall("HGET", jobKey, counterField)
    if value and not (string.match(value, "^%-?%d+$") and math.abs(tonumber(value)) < 2^53) then
      return jobKey .. " must hold a whole number between -2^53 and 2^53 in its '" .. counterField ..
        "' field, got '" .. string.sub(value, 1, 40) .. "'"
    end
  end
  return nil
end
