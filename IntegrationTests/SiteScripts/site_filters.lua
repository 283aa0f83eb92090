-- A site's Lua scripts ("LuaScripts"), for the guest matrix (IntegrationTests/test_guests_*.py): an
-- incoming-instance filter that refuses the instances whose SOP Instance UID ends in an odd digit,
-- and OnStoredInstance; both record what they saw, one JSON line per call, appended to
-- $SITE_RECORDS/lua.jsonl.

local records = os.getenv("SITE_RECORDS") .. "/lua.jsonl"

local function Record(line)
  local f = io.open(records, "a")
  f:write(line .. "\n")
  f:close()
end

local function RefusedBySite(uid)
  local last = tonumber(string.sub(uid, -1))
  return last ~= nil and last % 2 == 1
end

function ReceivedInstanceFilter(dicom, origin, info)
  local uid = dicom.SOPInstanceUID
  local refused = RefusedBySite(uid)
  Record(string.format('{"hook": "receivedInstanceFilter", "sop": "%s", "origin": "%s", "refused": %s}',
                       uid, tostring(origin["RequestOrigin"]), tostring(refused)))
  return not refused
end

function OnStoredInstance(instanceId, tags, metadata, origin)
  Record(string.format('{"hook": "onStored", "id": "%s", "sop": "%s", "origin": "%s"}',
                       instanceId, tags.SOPInstanceUID, tostring(origin["RequestOrigin"])))
end
