--[[
  Read the job caps a Redis operator set for a student: the hash
  emq:caps:<namespace> (`echomq-viz acl add` writes it; the student's ACL may
  read it, never write it), else the server's hash emq:caps (the app's
  setting, or the operator's for every student). Fields: queue_jobs,
  student_jobs, student_queues, job_bytes (see checkJobCap).
  Input:
    namespace  the student's namespace, or nil for an owner without one
  Output:
    a table of the four caps; nil when none are set (a private server, or a
    cluster, where the caps hash sits in another slot); or nil and an error
    message when the hash cannot be read or holds a bad value
]]
local CAP_FIELDS = {"queue_jobs", "student_jobs", "student_queues", "job_bytes"}

local function readJobCaps(namespace)
  local keys = namespace and {"emq:caps:" .. namespace, "emq:caps"} or {"emq:caps"}
  for _, capsKey in ipairs(keys) do
    local values = redis.pcall("HMGET", capsKey, unpack(CAP_FIELDS))
    if values.err then
      -- On a cluster this key lives in another slot: no caps there (the operator's
      -- path needs one server). Anywhere else an unreadable cap refuses the job.
      if string.find(rcall("INFO", "cluster"), "cluster_enabled:1", 1, true) then
        return nil
      end
      return nil, "the job caps in " .. capsKey .. " could not be read: " .. values.err
    end
    if values[1] or values[2] or values[3] or values[4] then
      local caps = {}
      for i, field in ipairs(CAP_FIELDS) do
        caps[field] = tonumber(values[i] or "")
        if not caps[field] or caps[field] < 1 or caps[field] % 1 ~= 0 then
          return nil, "the job cap " .. field .. " in " .. capsKey .. " must be a whole number of at least 1, got '" ..
            tostring(values[i]) .. "'"
        end
      end
      return caps
    end
  end
  return nil
end
