-- `assist/stage` notifications: the latest stage of an answer as virtual text at the end of the
-- cursor line ("assist · logic 230 ms"), replaced by each newer stage and cleared a moment after
-- the final one.
local M = {}

M.ns = vim.api.nvim_create_namespace("assist.stage")

-- A stage mark that no newer stage replaces is stale after this long (a cancelled request
-- never sends its final stage).
local STALE_MS = 15000

-- Per buffer: { id = extmark id, generation = n, last = the last stage's params }.
local state = {}

-- Highlight groups users can override; `default = true` keeps a colour scheme's choice. (Set
-- again after :colorscheme, which clears them.)
function M.highlights()
  pcall(vim.api.nvim_set_hl, 0, "AssistStage", { link = "Comment", default = true })
  pcall(vim.api.nvim_set_hl, 0, "AssistStageProblem", { link = "DiagnosticWarn", default = true })
end
M.highlights()

local function buffer_for(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  if not ok then
    return nil
  end
  local bufnr = vim.fn.bufnr(fname)
  if bufnr == -1 or not vim.api.nvim_buf_is_loaded(bufnr) then
    return nil
  end
  return bufnr
end

-- The window to draw in: the current one when it shows the buffer, else any that does.
local function window_for(bufnr)
  local current = vim.api.nvim_get_current_win()
  if vim.api.nvim_win_get_buf(current) == bufnr then
    return current
  end
  local win = vim.fn.bufwinid(bufnr)
  return win ~= -1 and win or nil
end

local function first_line(text, limit)
  text = tostring(text or ""):gsub("\r?\n.*", "")
  if #text > limit then
    text = text:sub(1, limit - 1) .. "…"
  end
  return text
end

--- The virtual text for one stage notification.
function M.label(params)
  local prefix = params.kind == "fix" and "assist fix · " or "assist · "
  if params.ok == false then
    local reason = params.reason
    if reason == nil or reason == vim.NIL then
      reason = "not verified"
    end
    return prefix .. params.stage .. ": " .. first_line(reason, 80), "AssistStageProblem"
  end
  local elapsed = tonumber(params.elapsedMs)
  local time = elapsed and (" %d ms"):format(math.floor(elapsed + 0.5)) or ""
  return prefix .. tostring(params.stage) .. time, "AssistStage"
end

function M.clear(bufnr)
  local s = state[bufnr]
  if s then
    s.generation = s.generation + 1
    s.id = nil
  end
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  end
end

--- Handle one `assist/stage` notification.
function M.show(params, options)
  if type(params) ~= "table" or type(params.uri) ~= "string" then
    return
  end
  local bufnr = buffer_for(params.uri)
  if not bufnr then
    return
  end
  local s = state[bufnr] or { generation = 0 }
  state[bufnr] = s
  s.last = params
  if not options.stage_virtual_text then
    return
  end
  local win = window_for(bufnr)
  if not win then
    return -- nobody would see it
  end
  local row = vim.api.nvim_win_get_cursor(win)[1] - 1
  row = math.min(row, vim.api.nvim_buf_line_count(bufnr) - 1)
  local text, group = M.label(params)
  s.id = vim.api.nvim_buf_set_extmark(bufnr, M.ns, row, 0, {
    id = s.id, -- reuse the mark: one per buffer, moved to the cursor line
    virt_text = { { text, group } },
    virt_text_pos = "eol",
    hl_mode = "combine",
  })
  -- Clear after a moment, unless a newer stage has been drawn meanwhile.
  s.generation = s.generation + 1
  local generation = s.generation
  local delay = params.stage == "final" and options.stage_clear_ms
    or math.max(options.stage_clear_ms, STALE_MS)
  vim.defer_fn(function()
    if state[bufnr] == s and s.generation == generation then
      M.clear(bufnr)
    end
  end, delay)
end

--- The last stage notification received for `bufnr` (nil when none).
function M.last(bufnr)
  local s = state[bufnr]
  return s and s.last
end

function M.forget(bufnr)
  state[bufnr] = nil
end

return M
