--[[
  Check the lifo argument of a priority change.
  Input:
    value  the argument as received: "1" for the front of the tier, "0" or "" for the back
  Output:
    nil when it is one of those, else an error message
]]
local function checkLifo(value)
  if value ~= "1" and value ~= "0" and value ~= "" then
    return "lifo must be '1', '0' or '', got '" .. tostring(value) .. "'"
  end
  return nil
end
