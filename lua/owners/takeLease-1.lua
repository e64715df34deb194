--[[
  Take an owner's lease: set it, with its expiry, only when no lease is there.
  PSETEX, never SET: a student's Redis user is given PSETEX on its leases and
  no SET there, so every lease it can write expires.

    KEYS[1] the owner's lease, emq:{viz-@<token>}:lease
    ARGV[1] the owner's proof, the random value the lease holds (1..64 characters)
    ARGV[2] the lease's time to live, whole milliseconds in 1..3600000 (an hour)

  Returns 1 when taken; 0 when a lease is there already (the caller reads it
  to tell its own from a twin's); an error reply, nothing written, on a bad argument.
]]
local ttl = ARGV[2]
if not string.match(ttl or "", "^%d+$") or tonumber(ttl) < 1 or tonumber(ttl) > 3600000 then
  return redis.error_reply("ERR lease time to live must be whole milliseconds in 1..3600000, got '" ..
    tostring(ttl) .. "'")
end
if type(ARGV[1]) ~= "string" or #ARGV[1] < 1 or #ARGV[1] > 64 then
  return redis.error_reply("ERR lease proof must be 1..64 characters")
end
if not string.match(KEYS[1] or "", "^emq:{viz%-@[^{}:]+}:lease$") then
  return redis.error_reply("ERR KEYS[1] must be a lease, emq:{viz-@<token>}:lease")
end
if redis.call("EXISTS", KEYS[1]) == 1 then
  return 0
end
redis.call("PSETEX", KEYS[1], ttl, ARGV[1])
return 1
