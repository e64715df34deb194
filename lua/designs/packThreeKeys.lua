--[[
  EXERCISE (notebook 09): three sort keys in one score. Each job's
  (tenant, priority, arrival) is packed, in Lua's doubles, as
    score = tenant * 2^(priorityBits + arrivalBits) + priority * 2^arrivalBits + arrival
  ZADDed to an empty sorted set; then one ZPOPMIN takes them all, smallest
  score first. While the budget tenantBits + priorityBits + arrivalBits is at
  most 53 every score is exact and the pop order is the sort by (tenant,
  priority, arrival); past 53 scores round, jobs share a score, and Redis
  orders those by member bytes. Not an EchoMQ command; never loaded by the
  real script loader.
  Input:
    KEYS[1] 'prioritized'  the demo queue's sorted set; must be empty
    ARGV[1] key prefix, "emq:{queue}:"
    ARGV[2] tenant bits, ARGV[3] priority bits, ARGV[4] arrival bits: integers in 0..53
    ARGV[5] "1" allows a budget of 54..64 bits (teaching: to watch it break), "0" does not
    ARGV[6..] four per job: member (not empty, each once), tenant, priority, arrival;
            each key an integer in 0..2^bits - 1 for its field; 1..1000 jobs
  Output:
    every job in pop order, as ZPOPMIN returns them: member, score, member, score, ...
    an error reply, with nothing written, when an argument is bad
]]
local rcall = redis.call
local prioritizedKey, prefix = KEYS[1], ARGV[1]

--- @include "../includes/checkKeys"
--- @include "../includes/checkNotEmpty"

local function wholeNumber(what, value, highest)
  if type(value) ~= "string" or not string.match(value, "^%d+$") or tonumber(value) > highest then
    return nil, what .. " must be an integer in 0.." .. string.format("%d", highest) .. ", got '" ..
      tostring(value) .. "'"
  end
  return tonumber(value)
end

-- Every check comes before the first write: a refused call changes nothing.
local argsError = checkKeys(prefix, {"prioritized"})
if argsError then
  return redis.error_reply("ERR " .. argsError)
end
local bits, fields = {}, {"tenant", "priority", "arrival"}
for i, field in ipairs(fields) do
  local value, bitsError = wholeNumber(field .. " bits", ARGV[i + 1], 53)
  if not value then
    return redis.error_reply("ERR " .. bitsError)
  end
  bits[i] = value
end
if ARGV[5] ~= "0" and ARGV[5] ~= "1" then
  return redis.error_reply("ERR allow past 53 bits must be '0' or '1', got '" .. tostring(ARGV[5]) .. "'")
end
local budget, ceiling = bits[1] + bits[2] + bits[3], (ARGV[5] == "1") and 64 or 53
if budget > ceiling then
  return redis.error_reply("ERR the budget must be at most " .. ceiling .. " bits (a double keeps " ..
    "whole numbers exact up to 2^53), got " .. budget .. " = " .. table.concat(bits, " + "))
end
local count = (#ARGV - 5) / 4
if count < 1 or count > 1000 or count ~= math.floor(count) then
  return redis.error_reply("ERR give 1..1000 jobs of four arguments each (member, tenant, " ..
    "priority, arrival), got " .. (#ARGV - 5) .. " arguments after the first five")
end
if rcall("EXISTS", prioritizedKey) == 1 then
  return redis.error_reply("ERR " .. prioritizedKey .. " must be empty before the exercise runs")
end
local scores, seen = {}, {}
for job = 1, count do
  local at = 6 + (job - 1) * 4
  local member = ARGV[at]
  local memberError = checkNotEmpty("member", member)
  if memberError or seen[member] then
    return redis.error_reply("ERR " .. (memberError or ("member '" .. member .. "' given twice")))
  end
  seen[member] = true
  local keys = {}
  for i, field in ipairs(fields) do
    local value, keyError = wholeNumber(field .. " of '" .. member .. "' (" .. bits[i] .. " bits)",
      ARGV[at + i], 2 ^ bits[i] - 1)
    if not value then
      return redis.error_reply("ERR " .. keyError)
    end
    keys[i] = value
  end
  scores[job] = keys[1] * 2 ^ (bits[2] + bits[3]) + keys[2] * 2 ^ bits[3] + keys[3]
end

for job = 1, count do
  rcall("ZADD", prioritizedKey, scores[job], ARGV[6 + (job - 1) * 4])
end
return rcall("ZPOPMIN", prioritizedKey, count)
