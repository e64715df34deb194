--[[
  Hold a demo queue, and the student who owns it, to the caps a Redis
  operator set, before a job is added (recordJobCap counts it once it is).
  Where: a demo queue is 'viz-<name>@<owner>'. An owner '<namespace>.<8
  characters>' is a student's (a Redis user of their own, whose ACL key
  pattern ends in exactly that shape); any other owner (one kernel on the
  'default' user, as in the app) is its own student here.
  The caps (readJobCaps):
    queue_jobs      jobs one queue may hold (wait + prioritized + delayed + active)
    student_jobs    jobs all of one student's queues may hold together
    student_queues  queues holding jobs one student may have
    job_bytes       bytes of one job's name and data together
  A queue that is not a demo queue, or a server with no caps hash, has none.
  The count per student: the hash emq:{viz-@<namespace>.registry}:queues (or
  emq:{viz-@<owner>}:queues), each queue's key prefix with its jobs when last
  added to (a job taken stays in 'active': still held), and 'total'. A queue
  deleted since (a reset, a kernel's exit, clean) only makes 'total' too high,
  so past a cap the queues whose 'id' is gone are dropped before refusing.
  Input:
    prefix      the key prefix "emq:{queue}:", already checked by checkKeys
    name, data  the job's name and data (JSON), already checked
  Output:
    nil and what recordJobCap needs when the job may be added (nil state: no
    caps here); else an error message naming the cap. Reads only.
]]
--- @include "countQueueJobs"
--- @include "readJobCaps"

local function checkJobCap(prefix, name, data)
  local queue = string.match(prefix, "^emq:{(viz%-[^{}:]*)}:$")
  if not queue then
    return nil
  end
  local namespace = string.match(queue, "^viz%-.*@([a-z0-9%-]+)%.........$")
  local owner = string.match(queue, "^viz%-.*@([^@]+)$")
  if not owner then
    return nil
  end
  local caps, capsError = readJobCaps(namespace)
  if not caps then
    return capsError
  end
  local student = namespace and ("student " .. namespace) or ("owner " .. owner)
  local bytes = #name + #data
  if bytes > caps.job_bytes then
    return "a job's name and data may take at most " .. caps.job_bytes .. " bytes here (the operator's job_bytes " ..
      "cap), got " .. bytes
  end
  local jobs = countQueueJobs(prefix)
  if jobs >= caps.queue_jobs then
    return "a queue may hold at most " .. caps.queue_jobs .. " jobs here (the operator's queue_jobs cap); " ..
      queue .. " holds " .. jobs .. ": reset it first"
  end
  local registryKey = namespace and ("emq:{viz-@" .. namespace .. ".registry}:queues") or
    ("emq:{viz-@" .. owner .. "}:queues")
  local entries = rcall("HLEN", registryKey)
  if entries > math.max(4 * caps.student_queues, 256) then -- only entries written by hand make this many
    return registryKey .. " has " .. entries .. " entries, far past the " .. caps.student_queues ..
      " queues of the operator's student_queues cap: only writes by hand make that many"
  end
  local listed = rcall("HGET", registryKey, prefix)
  local others = (tonumber(rcall("HGET", registryKey, "total") or "0") or 0) - (tonumber(listed or "0") or 0)
  local queues = entries - (rcall("HEXISTS", registryKey, "total") == 1 and 1 or 0) + (listed and 0 or 1)
  local recount = nil
  if others + jobs + 1 > caps.student_jobs or queues > caps.student_queues then
    -- The total kept may be too high: a queue deleted since (its 'id' gone) holds none now. A
    -- live queue holds what it held at its last add: taking a job leaves it in 'active'.
    recount, others, queues = {}, 0, 1
    local kept = rcall("HGETALL", registryKey)
    for i = 1, #kept, 2 do
      local field = kept[i]
      if field ~= "total" and field ~= prefix then
        local live = string.match(field, "^emq:{viz%-[^{}:]*}:$") and rcall("EXISTS", field .. "id") == 1
        local held = live and tonumber(kept[i + 1]) or 0
        recount[field] = held
        others = others + held
        queues = queues + (held > 0 and 1 or 0)
      end
    end
    if others + jobs + 1 > caps.student_jobs then
      return "a student may hold at most " .. caps.student_jobs .. " jobs here across their queues (the operator's " ..
        "student_jobs cap); " .. student .. " holds " .. (others + jobs) .. ": reset a queue first"
    end
    if queues > caps.student_queues then
      return "a student may fill at most " .. caps.student_queues .. " queues here (the operator's student_queues " ..
        "cap); " .. student .. " has " .. (queues - 1) .. " holding jobs: reset one first"
    end
  end
  return nil, {registryKey = registryKey, prefix = prefix, jobs = jobs + 1, total = others + jobs + 1,
    recount = recount}
end
