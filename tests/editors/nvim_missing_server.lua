-- The plugin with a language server command that does not exist: opening Python files says so
-- once, clearly, and nothing throws; the commands still answer.
return function(H)
  local T = H.config
  local out = H.out

  H.step("open")
  out.opened = {}
  for _, path in ipairs({ T.files.first, T.files.second }) do
    local ok, err = pcall(vim.cmd.edit, vim.fn.fnameescape(path))
    table.insert(out.opened, {
      ok = ok,
      error = not ok and tostring(err) or nil,
      filetype = vim.bo.filetype,
    })
  end
  H.tick() -- anything scheduled by the attach attempt runs now
  out.notifications_after_open = vim.deepcopy(out.notifications)
  out.clients = #vim.lsp.get_clients()

  H.step("commands")
  local status_ok, status_err = pcall(vim.cmd, "AssistStatus")
  local fix_ok, fix_err = pcall(vim.cmd, "AssistFix")
  out.commands = {
    status_ok = status_ok,
    status_error = not status_ok and tostring(status_err) or nil,
    fix_ok = fix_ok,
    fix_error = not fix_ok and tostring(fix_err) or nil,
  }
  out.status = require("assist").status()
  out.statusline = require("assist").statusline()
  H.step("done")
end
