-- :checkhealth assist
local compat = require("assist.compat")

local M = {}

function M.check()
  local health = vim.health
  -- vim.health.start & co. since 0.10; report_start & co. before.
  local start = health.start or health.report_start
  local ok = health.ok or health.report_ok
  local warn = health.warn or health.report_warn
  local error = health.error or health.report_error
  local info = health.info or health.report_info

  start("assist")
  local v = vim.version()
  local version = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  if compat.inline_completion() then
    ok("Neovim " .. version .. ": inline completion (ghost text) available")
  elseif compat.lsp_completion() then
    warn("Neovim " .. version .. ": no inline completion (0.12+); answers come as completion items")
  else
    warn("Neovim " .. version .. ": answers come through 'omnifunc' (<C-x><C-o>)")
  end

  local assist = require("assist")
  local options = assist.options()
  if not options then
    warn('require("assist").setup{} has not been called')
    return
  end
  local cmd = options.cmd
  if vim.fn.executable(cmd[1]) == 1 then
    ok("language server: " .. table.concat(cmd, " ") .. " (" .. vim.fn.exepath(cmd[1]) .. ")")
  else
    error(cmd[1] .. " is not an executable: install assist or set cmd in setup{}")
  end

  local current = assist.status()
  if not current then
    info("no assist language server has reported yet (open a supported file)")
  elseif current.state == "ready" then
    ok(require("assist.status").format(current))
  else
    warn(require("assist.status").format(current))
  end
end

return M
