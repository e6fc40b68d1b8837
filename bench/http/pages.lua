-- BENCH.md B7: first pages of listings with mixed filters over popular products.
local filters = {
  "", "?language=en", "?language=de", "?rating=5", "?rating=1,5",
  "?rating=1,2,5&language=en", "?rating=4", "?limit=50", "?language=fr&rating=5",
}
local n = 0
request = function()
  n = n + 1
  local product = "p" .. ((n * 7) % 40 + 1)
  return wrk.format("GET", "/v1/products/" .. product .. "/comments" .. filters[(n % #filters) + 1])
end
