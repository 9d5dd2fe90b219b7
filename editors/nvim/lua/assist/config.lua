-- The plugin's options: defaults, merging with the user's table, and checking their types.
local M = {}

M.defaults = {
  -- The language server command; `assist` must be on PATH (or give a full path).
  cmd = { "assist", "lsp" },
  filetypes = {
    "python",
    "javascript",
    "javascriptreact",
    "typescript",
    "typescriptreact",
    "go",
    "rust",
    "java",
    "c",
    "cpp",
  },
  -- One language server per project root: the nearest directory holding one of these.
  root_markers = {
    ".git",
    "pyproject.toml",
    "package.json",
    "go.mod",
    "Cargo.toml",
    "pom.xml",
    "build.gradle",
    "CMakeLists.txt",
  },
  -- The server's `assist` settings (camelCase, as in the VS Code extension): daemonUrl, ca
  -- (the private CA of an https:// daemon), autostart, debounceMs, maxTokens, inlineCompletion,
  -- completionItems, stageNotifications, fixCandidates, logLevel. Unset keys keep the server's
  -- defaults.
  settings = {},
  -- Ghost text through vim.lsp.inline_completion (Neovim 0.12+); completion items otherwise.
  inline = true,
  -- Without inline completion, on Neovim 0.11: open the completion menu by itself on the
  -- server's trigger characters (vim.lsp.completion autotrigger; wants completeopt+=noselect).
  autotrigger = false,
  -- Show the latest stage of an answer as virtual text at the end of the cursor line.
  stage_virtual_text = true,
  -- How long the last ("final") stage stays visible.
  stage_clear_ms = 1500,
}

local types = {
  cmd = "table",
  filetypes = "table",
  root_markers = "table",
  settings = "table",
  inline = "boolean",
  autotrigger = "boolean",
  stage_virtual_text = "boolean",
  stage_clear_ms = "number",
}

--- The defaults overridden by `user`; a value of the wrong type is reported and replaced by its
--- default. Returns the options and a list of problems (strings).
function M.merge(user)
  local problems = {}
  if user ~= nil and type(user) ~= "table" then
    table.insert(problems, "setup() takes a table, not a " .. type(user))
    user = nil
  end
  user = user or {}
  local options = vim.deepcopy(M.defaults)
  for key, value in pairs(user) do
    local wanted = types[key]
    if wanted == nil then
      table.insert(problems, ("unknown option %q"):format(tostring(key)))
    elseif type(value) ~= wanted then
      table.insert(
        problems,
        ("option %s must be a %s, not a %s; using the default"):format(key, wanted, type(value))
      )
    elseif key == "settings" then
      options.settings = vim.tbl_deep_extend("force", options.settings, value)
    else
      options[key] = value
    end
  end
  if #options.cmd == 0 then
    table.insert(problems, "option cmd is empty; using the default")
    options.cmd = vim.deepcopy(M.defaults.cmd)
  end
  return options, problems
end

--- `settings` as it goes over the wire: an empty Lua table would be encoded as a JSON array,
--- which the server rejects, so an empty one becomes an empty JSON object.
function M.wire_settings(settings)
  if settings == nil or next(settings) == nil then
    return vim.empty_dict()
  end
  return settings
end

return M
