-- assist for Neovim: starts the assist language server (`assist lsp`) for supported buffers and
-- wires its features into Neovim's LSP client:
--
--   * completions: ghost text through vim.lsp.inline_completion (0.12+), else completion items
--     (vim.lsp.completion on 0.11, 'omnifunc' before);
--   * the stages of an answer (`assist/stage`) as virtual text at the end of the cursor line;
--   * the daemon's state (`assist/status`) for statuslines and :AssistStatus;
--   * :AssistFix[!], which asks the server to repair the whole file (`assist.fixFile`); the
--     server applies its verified fix with workspace/applyEdit, which Neovim handles itself.
local compat = require("assist.compat")
local config = require("assist.config")
local stages = require("assist.stages")
local status = require("assist.status")

local M = {}

local NAME = "assist"
local FIX_COMMAND = "assist.fixFile"
local levels = vim.log.levels

local options = nil -- the merged options, once setup() has run
local unavailable = nil -- why the server cannot be started (said once), or nil
local fixing = {} -- client id -> :AssistFix requests in flight
local warned = {} -- client id -> true once "daemon unavailable" was said (or it was ready)

local function notify(message, level)
  vim.notify("assist: " .. message, level or levels.INFO, { title = "assist" })
end

-- A `User` autocommand for statuslines and scripts: AssistStatus, AssistFixDone.
local function fire(pattern, data)
  pcall(vim.api.nvim_exec_autocmds, "User", { pattern = pattern, modeline = false, data = data })
end

local function client_for(bufnr)
  for _, client in ipairs(compat.get_clients({ bufnr = bufnr, name = NAME })) do
    if not compat.is_stopped(client) then
      return client
    end
  end
  return nil
end

-- Handlers for what the server sends besides answers. They are per client, so they never
-- affect other language servers.
local handlers = {
  ["assist/stage"] = function(_, params)
    if options then
      stages.show(params, options)
    end
  end,

  ["assist/status"] = function(_, params, ctx)
    local current = status.update(ctx.client_id, params)
    if not current then
      return
    end
    if current.state == "ready" then
      warned[ctx.client_id] = true
    elseif current.state == "unavailable" and not warned[ctx.client_id] then
      -- Said once per server: the server retries on its own (and its status keeps saying
      -- "unavailable"), and a daemon lost later is reported by the server itself.
      warned[ctx.client_id] = true
      notify(
        "the daemon is unavailable" .. (current.message and (": " .. current.message) or ""),
        levels.WARN
      )
    end
    fire("AssistStatus", current)
  end,

  ["window/showMessage"] = function(err, params, ctx, ...)
    -- :AssistFix reports the outcome of a fix itself; the server's copy of it (its only
    -- informational message) would say it twice. Warnings and errors always get through.
    local info = vim.lsp.protocol.MessageType.Info
    if (fixing[ctx.client_id] or 0) > 0 and type(params) == "table" and params.type == info then
      return vim.NIL
    end
    local default = vim.lsp.handlers["window/showMessage"]
    return default and default(err, params, ctx, ...) or vim.NIL
  end,
}

-- The project root of a buffer: the nearest directory with a root marker, else its own.
local function root_for(path)
  local dir = vim.fs.dirname(path)
  local found = vim.fs.find(options.root_markers, { path = dir, upward = true, limit = 1 })[1]
  return found and vim.fs.dirname(found) or dir
end

-- One client per root: reuse a running one with the same root directory.
local function reuse(client, cfg)
  return client.name == cfg.name
    and not compat.is_stopped(client)
    and compat.root_dir(client) == cfg.root_dir
end

-- Ghost text needs Neovim 0.12 and a server that answers inline requests (it advertises them,
-- and settings.inlineCompletion is not false); completion items otherwise.
local function inline_for(client)
  local inline = compat.inline_completion()
  local provided = (client.server_capabilities or {}).inlineCompletionProvider
  if options.inline and options.settings.inlineCompletion ~= false and provided and inline then
    return inline
  end
  return nil
end

local function on_attach(client, bufnr)
  local inline = inline_for(client)
  if inline then
    -- Ghost text appears in Insert mode; accepting it is the user's key (see the README).
    inline.enable(true, { bufnr = bufnr })
    return
  end
  -- The answer is a completion item: <C-x><C-o> asks for it (filetype plugins, Python's among
  -- them, set an 'omnifunc' of their own, so it is set here).
  vim.bo[bufnr].omnifunc = "v:lua.vim.lsp.omnifunc"
  local completion = compat.lsp_completion()
  if completion then
    -- 0.11: accepting the item (<C-y>) also applies its edit and reports it; with autotrigger
    -- the menu opens by itself on the server's trigger characters.
    completion.enable(true, client.id, bufnr, { autotrigger = options.autotrigger })
  end
end

local function on_exit(code, signal, client_id)
  fixing[client_id] = nil
  warned[client_id] = nil
  local message = ("the language server exited (code %s, signal %s)"):format(code, signal)
  status.stopped(client_id, message)
  vim.schedule(function()
    fire("AssistStatus", status.get(client_id))
  end)
end

local function attachable(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local path = vim.api.nvim_buf_get_name(bufnr)
  -- Only files on disk: not unnamed buffers, nor URIs such as fugitive:// or oil://.
  if path == "" or path:match("^%a[%w+.-]*://") then
    return nil
  end
  return path
end

--- Start (or reuse) the language server for `bufnr` and attach it.
function M.attach(bufnr)
  if not options or unavailable then
    return nil
  end
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local path = attachable(bufnr)
  if not path then
    return nil
  end
  local cmd = options.cmd
  if type(cmd[1]) ~= "string" or vim.fn.executable(cmd[1]) ~= 1 then
    unavailable = ("cannot start the language server: %s is not an executable. Install assist "
      .. '(pip install assist) or set cmd in require("assist").setup{}, e.g. to the '
      .. ".venv/bin/assist of a checkout."):format(vim.inspect(cmd[1]))
    notify(unavailable, levels.ERROR)
    return nil
  end
  local settings = config.wire_settings(options.settings)
  local ok, client_id = pcall(vim.lsp.start, {
    name = NAME,
    cmd = cmd,
    root_dir = root_for(path),
    init_options = settings,
    settings = { assist = settings }, -- the answer to workspace/configuration "assist"
    handlers = handlers,
    on_attach = on_attach,
    on_exit = on_exit,
  }, { bufnr = bufnr, reuse_client = reuse })
  if not ok then
    unavailable = "cannot start the language server: " .. tostring(client_id)
    notify(unavailable, levels.ERROR)
    return nil
  end
  return client_id
end

-- Send changed settings to running servers (setup() called again).
local function push_settings()
  local settings = config.wire_settings(options.settings)
  for _, client in ipairs(compat.get_clients({ name = NAME })) do
    client.settings = { assist = settings }
    if client.config then
      client.config.settings = client.settings
    end
    local params = { settings = { assist = settings } }
    if vim.fn.has("nvim-0.11") == 1 then
      client:notify("workspace/didChangeConfiguration", params)
    else
      client.notify("workspace/didChangeConfiguration", params)
    end
  end
end

--- Repair the syntax errors of a buffer: the server runs the fix, applies a verified one through
--- workspace/applyEdit and answers { changed, verified, message }.
--- opts: { bufnr = current, write = false (write the buffer when the fix was applied) }.
--- `callback(result)` and the `User AssistFixDone` autocommand (data = result) follow the end.
function M.fix(opts, callback)
  opts = opts or {}
  local bufnr = opts.bufnr
  if bufnr == nil or bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end

  local function finish(result, level)
    result.bufnr = bufnr
    notify(result.message, level)
    fire("AssistFixDone", result)
    if callback then
      callback(result)
    end
  end

  local client = client_for(bufnr)
  if not client then
    local message = unavailable or "no assist language server is attached to this buffer"
    finish({ changed = false, verified = false, message = message }, levels.WARN)
    return
  end
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":~:.")
  vim.api.nvim_echo({ { "assist: fixing " .. name .. "…", "Comment" } }, false, {})

  local function done(err, result)
    fixing[client.id] = math.max((fixing[client.id] or 1) - 1, 0)
    if err then
      local reason = type(err) == "table" and err.message or tostring(err)
      finish({ changed = false, verified = false, message = "fix failed: " .. reason }, levels.ERROR)
      return
    end
    result = type(result) == "table" and result or {}
    local outcome = {
      changed = result.changed == true,
      verified = result.verified == true,
      message = type(result.message) == "string" and result.message or "the server sent no result",
      written = false,
    }
    -- By the time the answer arrives, the server's workspace/applyEdit has been applied: it
    -- waits for Neovim's reply before answering, and says changed = false when not applied.
    if opts.write and outcome.changed and vim.api.nvim_buf_is_loaded(bufnr) then
      local written, problem = pcall(vim.api.nvim_buf_call, bufnr, function()
        vim.cmd("silent update")
      end)
      outcome.written = written
      outcome.message = outcome.message
        .. (written and " (written)" or (" (not written: " .. tostring(problem) .. ")"))
    end
    local level = (outcome.changed or outcome.verified) and levels.INFO or levels.WARN
    finish(outcome, level)
  end

  fixing[client.id] = (fixing[client.id] or 0) + 1
  local params = { command = FIX_COMMAND, arguments = { vim.uri_from_bufnr(bufnr) } }
  -- Passing bufnr makes Neovim send pending changes of the buffer before the request.
  local sent = compat.request(client, "workspace/executeCommand", params, done, bufnr)
  if not sent then
    done({ message = "the language server is not running" })
  end
end

--- The daemon's state as the server of `bufnr` (default: current) last reported it:
--- { state = "starting"|"ready"|"unavailable"|"stopped", daemonUrl, model, backend,
---   lastLatencyMs, message }, or nil before any report.
function M.status(bufnr)
  local client = client_for(bufnr or vim.api.nvim_get_current_buf())
  local current = status.get(client and client.id)
  if not current and unavailable then
    return { state = "unavailable", message = unavailable }
  end
  return current
end

--- A short status for statuslines: "assist 230 ms", "assist starting", … ("" before any).
function M.statusline()
  return status.short(M.status())
end

--- The options in effect (nil before setup()).
function M.options()
  return options and vim.deepcopy(options)
end

function M.setup(user)
  local merged, problems = config.merge(user)
  local again = options ~= nil
  options = merged
  unavailable = nil
  if #problems > 0 then
    notify(table.concat(problems, "; "), levels.WARN)
  end

  local group = vim.api.nvim_create_augroup("assist", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = options.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
    desc = "assist: start the language server",
  })
  vim.api.nvim_create_autocmd("ColorScheme", { group = group, callback = stages.highlights })
  vim.api.nvim_create_autocmd("BufWipeout", {
    group = group,
    callback = function(args)
      stages.forget(args.buf)
    end,
  })

  vim.api.nvim_create_user_command("AssistFix", function(cmd)
    M.fix({ write = cmd.bang })
  end, { bang = true, desc = "assist: fix the syntax errors of this file (! also writes it)" })
  vim.api.nvim_create_user_command("AssistStatus", function()
    vim.notify(status.format(M.status()), levels.INFO, { title = "assist" })
  end, { desc = "assist: the daemon's state" })

  if again then
    push_settings()
  end
  -- Buffers opened before setup() (a lazy-loaded plugin) attach now.
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if
      vim.api.nvim_buf_is_loaded(bufnr)
      and vim.tbl_contains(options.filetypes, vim.bo[bufnr].filetype)
    then
      M.attach(bufnr)
    end
  end
end

return M
