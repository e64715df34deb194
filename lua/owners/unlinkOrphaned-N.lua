--[[
  Delete keys of one owner only if it holds no lease, checked in the same
  step as the delete: an owner that renewed meanwhile keeps every key. A
  lease with no expiry, or one longer than any kernel takes, was written by
  hand and holds nothing: it goes with the keys.
  For one server (not a cluster: the lease and the keys sit in other slots).

    KEYS[1]    the owner's lease, emq:{viz-@<token>}:lease
    KEYS[2..N] that owner's demo keys (at most 1000; none checks the lease alone)
    ARGV[1]    the longest lease a kernel takes, whole milliseconds (3600000 if not given)

  Returns how many keys were deleted (a lease written by hand counted); 0 when the lease holds.
]]
local longest = tonumber(ARGV[1] or "") or 3600000
local ttl = redis.call("PTTL", KEYS[1])
if ttl > 0 and ttl <= longest then
  return 0
end
local deleted = 0
if ttl ~= -2 then
  deleted = redis.call("UNLINK", KEYS[1])
end
if #KEYS > 1 then
  deleted = deleted + redis.call("UNLINK", unpack(KEYS, 2))
end
return deleted
