--[[
  Delete keys of one owner only if its lease is absent, checked in the same
  step as the delete: an owner that renewed meanwhile keeps every key.
  For one server (not a cluster: the lease and the keys sit in other slots).

    KEYS[1]    the owner's lease, emq:{viz-@<token>}:lease
    KEYS[2..N] that owner's demo keys (at most 1000)

  Returns how many keys were deleted; 0 when the lease exists.
]]
if redis.call("EXISTS", KEYS[1]) == 1 then
  return 0
end
return redis.call("UNLINK", unpack(KEYS, 2))
