-- `assist/status` notifications: the daemon's state as each language server last reported it
-- ({ state = "starting"|"ready"|"unavailable", daemonUrl, model, backend, lastLatencyMs,
-- message }), for `require("assist").status()`, statuslines and :AssistStatus.
local M = {}

local by_client = {} -- client id -> status table
local latest = nil -- the most recent status of any client

local function plain(value)
  if value == vim.NIL then
    return nil
  end
  return value
end

--- Store one notification; returns the stored status and the state it replaced.
function M.update(client_id, params)
  if type(params) ~= "table" then
    return nil, nil
  end
  local previous = by_client[client_id]
  local status = {
    state = plain(params.state) or "starting",
    daemonUrl = plain(params.daemonUrl),
    model = plain(params.model),
    backend = plain(params.backend),
    lastLatencyMs = plain(params.lastLatencyMs),
    message = plain(params.message),
    client_id = client_id,
  }
  by_client[client_id] = status
  latest = status
  return status, previous and previous.state
end

--- The client exited: its status says so.
function M.stopped(client_id, message)
  local status = by_client[client_id]
  if not status then
    return
  end
  status = vim.tbl_extend("force", status, { state = "stopped", message = message })
  by_client[client_id] = status
  if latest and latest.client_id == client_id then
    latest = status
  end
end

--- The status of the client with id `client_id`, else the latest of any; nil before any.
function M.get(client_id)
  local status = (client_id and by_client[client_id]) or latest
  return status and vim.deepcopy(status)
end

--- One line for :AssistStatus.
function M.format(status)
  if not status then
    return "assist: no status yet (no assist language server has reported)"
  end
  local parts = { "assist: " .. status.state }
  if status.model then
    table.insert(parts, status.model)
  end
  if status.backend then
    table.insert(parts, status.backend)
  end
  if status.daemonUrl then
    table.insert(parts, status.daemonUrl)
  end
  if status.lastLatencyMs then
    table.insert(parts, ("last answer %d ms"):format(math.floor(status.lastLatencyMs + 0.5)))
  end
  if status.message then
    table.insert(parts, status.message)
  end
  return table.concat(parts, " · ")
end

--- A short form for statuslines: "assist 230 ms", "assist starting", "assist unavailable".
function M.short(status)
  if not status then
    return ""
  end
  if status.state == "ready" then
    if status.lastLatencyMs then
      return ("assist %d ms"):format(math.floor(status.lastLatencyMs + 0.5))
    end
    return "assist"
  end
  return "assist " .. status.state
end

return M
