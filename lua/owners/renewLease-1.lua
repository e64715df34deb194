--[[
  Renew an owner's lease only while it is still that owner's: compare and
  renew in one step, so a lease that lapsed is never taken back.

    KEYS[1] the owner's lease, emq:{viz-@<token>}:lease
    ARGV[1] the owner's proof, the random value it set the lease to
    ARGV[2] the lease's new time to live, whole milliseconds in 1..3600000 (an hour)

  Returns 1 when renewed; 0 when the lease is gone or holds another value.
  PEXPIRE is allowed on a server out of memory, so renewing never fails there.
]]
local ttl = ARGV[2]
if not string.match(ttl or "", "^%d+$") or tonumber(ttl) < 1 or tonumber(ttl) > 3600000 then
  return redis.error_reply("ERR lease time to live must be whole milliseconds in 1..3600000, got '" ..
    tostring(ttl) .. "'")
end
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ttl)
end
return 0
