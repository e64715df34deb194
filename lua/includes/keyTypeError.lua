--[[
  The one line that says a key holds another Redis type than a script keeps
  there: such a key would make a command fail after the script's first
  writes. A key that does not exist is fine (the script makes it).
  Input:
    key     the key
    wanted  the type the script keeps there, as TYPE names it ("hash", "zset", ...)
    called  what the line calls it ("job hash"); nil: wanted
  Output:
    nil when the key holds that type or does not exist, else
    "<key> is a <type>, not a <called>"
]]
local function keyTypeError(key, wanted, called)
  local held = rcall("TYPE", key)["ok"]
  if held == "none" or held == wanted then
    return nil
  end
  return key .. " is a " .. held .. ", not a " .. (called or wanted)
end
