-- wrk script: every request creates a new v1 topic subscription, spread over 100,000 registrations.
-- Request n subscribes registration (n % 100000) to topic (n / 100000), so 1,000,000 requests make
-- 1,000,000 distinct subscriptions (10 topics per registration).
local counter = 0
local thread_id = 0

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end

function init(args)
  thread_id = id
  n = 0
end

request = function()
  local k = n * 4 + thread_id
  n = n + 1
  local registration = string.format("bench%06d%%3AAPA91bxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", k % 100000)
  local topic = string.format("topic-%d", math.floor(k / 100000))
  local path = "/v1/projects/bench/registrations/" .. registration .. "/topicSubscriptions?topicName=" .. topic
  return wrk.format("POST", path, {["Authorization"] = "Bearer owner", ["Content-Type"] = "application/json"}, "{}")
end
