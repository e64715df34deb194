--[[
  Check that a text argument was given and is not empty.
  Input:
    what   what the argument is, for the message, e.g. "lock token"
    value  the argument as received
  Output:
    nil when it is a non-empty string, else an error message
]]
local function checkNotEmpty(what, value)
  if type(value) ~= "string" or value == "" then
    return what .. " must not be empty"
  end
  return nil
end
