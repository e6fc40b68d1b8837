-- BENCH.md B6: single-comment POSTs, spread over 200 products and 8 languages.
local languages = {"en", "de", "fr", "es", "it", "pt", "nl", "pl"}
local n = 0
request = function()
  n = n + 1
  local product = "b" .. (n % 200)
  local body = string.format(
    '{"author":"bench%d","language":"%s","rating":%d,"title":"Benchmark","body":"A comment posted by the load generator, number %d."}',
    n % 5000, languages[(n % 8) + 1], (n % 5) + 1, n)
  return wrk.format("POST", "/v1/products/" .. product .. "/comments",
    {["Content-Type"] = "application/json"}, body)
end
