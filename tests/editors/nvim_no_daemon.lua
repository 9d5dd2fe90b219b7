-- The plugin with a daemon that does not answer: the language server keeps retrying and keeps
-- reporting "unavailable"; the user is told once, and the status says why.
return function(H)
  local T = H.config
  local out = H.out
  local api = vim.api

  local unavailable = 0
  api.nvim_create_autocmd("User", {
    pattern = "AssistStatus",
    callback = function(args)
      if type(args.data) == "table" and args.data.state == "unavailable" then
        unavailable = unavailable + 1
      end
    end,
  })

  H.step("attach")
  vim.cmd.edit(vim.fn.fnameescape(T.files.main))
  local bufnr = api.nvim_get_current_buf()
  H.wait(T.wait_ms.attach, "the assist client to attach", function()
    return vim.lsp.get_clients({ bufnr = bufnr, name = "assist" })[1]
  end)

  H.step("retries")
  -- The server retries with a growing delay; two reports of "unavailable" show that the
  -- second one was not announced again.
  H.wait(T.wait_ms.retries, "two unavailable statuses", function()
    return unavailable >= 2
  end)
  out.unavailable_reports = unavailable
  out.status = require("assist").status()
  out.statusline = require("assist").statusline()

  H.step("stop")
  vim.lsp.stop_client(vim.lsp.get_clients({ name = "assist" }))
  H.wait(T.wait_ms.stop, "the language server to exit", function()
    return #vim.lsp.get_clients({ name = "assist" }) == 0
  end)
  H.step("done")
end
