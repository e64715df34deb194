--[[
  Take the id of a job being added and, unless that job exists already, write
  its hash: the first half of every script that adds a job.
  Input:
    idKey, eventsKey  the queue's 'id' counter and events stream
    prefix            the key prefix "emq:{queue}:"
    customId          "" for the next counter value, else the custom id
    name, data, timestamp, priority  as storeJob takes them
  Output:
    jobId, jobKey, and true when the job is new; false when it existed already
    (then only the id counter and a 'duplicated' event were written)
]]
--- @include "nextJobId"
--- @include "storeJob"

local function createJob(idKey, eventsKey, prefix, customId, name, data, timestamp, priority)
  local jobId, jobKey, exists = nextJobId(idKey, eventsKey, prefix, customId)
  if not exists then
    storeJob(eventsKey, jobKey, jobId, name, data, timestamp, priority)
  end
  return jobId, jobKey, not exists
end
