--[[
  Check a job id by the rule Python's keys.validate_job_id applies, so that
  the job hash prefix .. jobId can be no other key of the queue: 1..100
  characters of valid UTF-8, none of them '{', '}', ':', whitespace or a
  control character (U+0000..U+0020, U+007F..U+00A0, and the Unicode spaces
  U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000), nor an
  invisible format character (Unicode category Cf: zero-width, bidi controls,
  BOM, tags; keys.FORMAT_CHARACTERS, the same ranges); not a key type name;
  and, for a new custom id, not a plain integer (auto ids are).
  Input:
    jobId     the id as received
    existing  true for the id of a job that may exist (an auto id is fine)
  Output:
    nil when it is fine, else an error message
]]
local KEY_TYPE_NAMES = {
  prioritized = true, pc = true, id = true, marker = true, meta = true, events = true, wait = true,
  active = true, delayed = true, completed = true, stalled = true, limiter = true, paused = true,
}
-- One UTF-8 character: the well-formed byte sequences of RFC 3629 (no
-- overlong forms, no surrogates), each anchored at the position searched.
local UTF8_CHARACTER = {
  "^[%z\1-\127]", "^[\194-\223][\128-\191]", "^\224[\160-\191][\128-\191]",
  "^[\225-\236\238\239][\128-\191][\128-\191]", "^\237[\128-\159][\128-\191]",
  "^\240[\144-\191][\128-\191][\128-\191]", "^[\241-\243][\128-\191][\128-\191][\128-\191]",
  "^\244[\128-\143][\128-\191][\128-\191]",
}
local LEAD_BITS = {0, 192, 224, 240} -- what to take off a lead byte, by sequence length
-- Unicode 15.1's format characters (Cf), first and last of each range.
local FORMAT_CHARACTERS = {
  {0x00AD, 0x00AD}, {0x0600, 0x0605}, {0x061C, 0x061C}, {0x06DD, 0x06DD}, {0x070F, 0x070F},
  {0x0890, 0x0891}, {0x08E2, 0x08E2}, {0x180E, 0x180E}, {0x200B, 0x200F}, {0x202A, 0x202E},
  {0x2060, 0x2064}, {0x2066, 0x206F}, {0xFEFF, 0xFEFF}, {0xFFF9, 0xFFFB}, {0x110BD, 0x110BD},
  {0x110CD, 0x110CD}, {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0xE0001},
  {0xE0020, 0xE007F},
}

local function checkJobId(jobId, existing)
  if type(jobId) ~= "string" or jobId == "" then
    return "job id must not be empty"
  end
  local position, count = 1, 0
  while position <= #jobId do
    local first, last
    for _, pattern in ipairs(UTF8_CHARACTER) do
      first, last = string.find(jobId, pattern, position)
      if first then
        break
      end
    end
    if not first then
      return "job id must be valid UTF-8, got a stray byte " .. string.byte(jobId, position) ..
        " at byte " .. position
    end
    local bytes = {string.byte(jobId, first, last)}
    local codePoint = bytes[1] - LEAD_BITS[#bytes]
    for i = 2, #bytes do
      codePoint = codePoint * 64 + bytes[i] - 128
    end
    count = count + 1
    if count > 100 then
      return "job id must be 1..100 characters, got more"
    end
    if codePoint <= 32 or (codePoint >= 127 and codePoint <= 160) or codePoint == 123 or
        codePoint == 125 or codePoint == 58 or codePoint == 0x1680 or
        (codePoint >= 0x2000 and codePoint <= 0x200A) or codePoint == 0x2028 or
        codePoint == 0x2029 or codePoint == 0x202F or codePoint == 0x205F or codePoint == 0x3000 then
      return "job id must not contain '{', '}', ':', whitespace or control characters, got " ..
        string.format("U+%04X", codePoint) .. " at character " .. count
    end
    for _, range in ipairs(FORMAT_CHARACTERS) do
      if codePoint >= range[1] and codePoint <= range[2] then
        return "job id must not contain invisible format characters (zero-width, bidi controls: nobody " ..
          "could see them), got " .. string.format("U+%04X", codePoint) .. " at character " .. count
      end
    end
    position = last + 1
  end
  if not existing and string.match(jobId, "^%d+$") then
    return "custom job id must not be a plain integer (auto ids are), got '" .. jobId .. "'"
  end
  if KEY_TYPE_NAMES[jobId] then
    return "job id '" .. jobId .. "' is a key type name: its job hash would be the queue's '" ..
      jobId .. "' key"
  end
  return nil
end
