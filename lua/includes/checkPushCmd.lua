--[[
  Check the push command that puts a job without priority on the wait list.
  Input:
    value  the argument as received: "LPUSH" for the back of the list, "RPUSH"
           for its front (lifo)
  Output:
    nil when it is one of those, else an error message
]]
local function checkPushCmd(value)
  if value ~= "LPUSH" and value ~= "RPUSH" then
    return "push command must be 'LPUSH' or 'RPUSH', got '" .. tostring(value) .. "'"
  end
  return nil
end
