-- Feature checks for the Neovim APIs assist uses, so that 0.8 to 0.11 get a fallback instead of
-- an error. Everything newer than Neovim 0.8 is looked up here, in one place.
local M = {}

local has_011 = vim.fn.has("nvim-0.11") == 1

--- `vim.lsp.inline_completion` (Neovim 0.12+: ghost text), or nil.
function M.inline_completion()
  local ok, module = pcall(function()
    return vim.lsp.inline_completion
  end)
  if ok and type(module) == "table" and type(module.enable) == "function" then
    return module
  end
  return nil
end

--- `vim.lsp.completion` (Neovim 0.11+: completion items with autotrigger), or nil.
function M.lsp_completion()
  local ok, module = pcall(function()
    return vim.lsp.completion
  end)
  if ok and type(module) == "table" and type(module.enable) == "function" then
    return module
  end
  return nil
end

--- The clients matching `filter` ({ bufnr = …, name = … }).
function M.get_clients(filter)
  if vim.lsp.get_clients then -- 0.10+
    return vim.lsp.get_clients(filter)
  end
  return vim.lsp.get_active_clients(filter)
end

--- Send a request through `client`. Before 0.11 the client's methods were closures called with
--- a dot; since 0.11 they are methods (and the dot form is deprecated).
function M.request(client, method, params, handler, bufnr)
  if has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- Whether `client` is stopped or stopping. (`is_stopped` ignores its argument before 0.11, and
--- takes self after, so passing the client works for both.)
function M.is_stopped(client)
  return client.is_stopped(client)
end

--- The root directory a client was started with.
function M.root_dir(client)
  return client.root_dir or (client.config and client.config.root_dir)
end

return M
