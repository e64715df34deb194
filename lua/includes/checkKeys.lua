--[[
  Check that a script got exactly the keys of one queue, in its header's
  order: KEYS[i] must be prefix .. keyTypes[i]. Scripts run it before their
  first write, so a call naming another queue's key (or a key of another
  type) is refused and changes nothing. The prefix must have the layout
  'emq:{queue}:', so the job hashes and locks made from it stay inside the
  queue's hash tag. Each key must also hold its Redis type, or not exist: a
  key of another type (a student may write their own keys by hand) would
  make a command fail halfway through the script, after its first writes.
  Input:
    prefix    the key prefix, "emq:{queue}:"
    keyTypes  the key type of each KEYS position, e.g. {"wait", "prioritized"}
  Output:
    nil when all is well, else an error message
]]
--- @include "keyTypeError"

-- The Redis type of each queue key, as BullMQ keeps them.
local REDIS_TYPE_OF = {
  wait = "list", paused = "list", active = "list", prioritized = "zset", delayed = "zset",
  completed = "zset", marker = "zset", meta = "hash", id = "string", pc = "string",
  limiter = "string", events = "stream", stalled = "set",
}

local function checkKeys(prefix, keyTypes)
  if type(prefix) ~= "string" then
    return "key prefix must be given, as 'emq:{queue}:'"
  end
  if #KEYS ~= #keyTypes then
    return "expects " .. #keyTypes .. " KEYS, got " .. #KEYS
  end
  for i, keyType in ipairs(keyTypes) do
    if KEYS[i] ~= prefix .. keyType then
      return "KEYS[" .. i .. "] must be the key prefix '" .. prefix .. "' followed by '" ..
        keyType .. "', got '" .. KEYS[i] .. "'"
    end
  end
  if not string.match(prefix, "^[^{}:]+:{[^{}:]+}:$") then
    return "key prefix must have the layout 'emq:{queue}:', got '" .. prefix .. "'"
  end
  for i, keyType in ipairs(keyTypes) do
    local wrongType = keyTypeError(KEYS[i], REDIS_TYPE_OF[keyType])
    if wrongType then
      return "KEYS[" .. i .. "] " .. wrongType
    end
  end
  return nil
end
