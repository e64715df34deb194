--[[
  Check that the key prefix in ARGV belongs to the queue of the script's KEYS,
  so a job hash or lock is never written into another queue's keys.
  Input:
    prefix   the key prefix argument, "emq:{queue}:"
    key      one of the script's KEYS
    keyType  that key's type, e.g. "wait"
  Output:
    nil when key == prefix .. keyType, else an error message
]]
local function checkKeyPrefix(prefix, key, keyType)
  if prefix == nil or prefix == "" or key ~= prefix .. keyType then
    return "key prefix '" .. tostring(prefix) .. "' is not the prefix of " .. key
  end
  return nil
end
