-- The plugin in a real Neovim against the real language server, daemon and model: attach,
-- inline completion (requested, then as ghost text typed into and accepted), a completion list,
-- stage virtual text, :AssistFix!, status, one client per root, and the fallbacks that older
-- Neovims get (simulated by hiding the newer APIs from the plugin).
return function(H)
  local T = H.config
  local out = H.out
  local assist = require("assist")
  local compat = require("assist.compat")
  local stages = require("assist.stages")
  local api = vim.api
  local WAIT = T.wait_ms

  out.nvim_version = tostring(vim.version())

  local function assist_client(bufnr)
    return vim.lsp.get_clients({ bufnr = bufnr, name = "assist" })[1]
  end

  -- Open a file and wait for the assist client to be attached to it (initialized).
  local function open(path)
    vim.cmd.edit(vim.fn.fnameescape(path))
    local bufnr = api.nvim_get_current_buf()
    local client = H.wait(WAIT.attach, "the assist client to attach to " .. path, function()
      return assist_client(bufnr)
    end)
    return bufnr, client
  end

  local function text_of(bufnr)
    return table.concat(api.nvim_buf_get_lines(bufnr, 0, -1, true), "\n")
  end

  local function end_position(bufnr)
    local lines = api.nvim_buf_get_lines(bufnr, 0, -1, true)
    return { line = #lines - 1, character = #lines[#lines] }
  end

  -- The virtual texts in the plugin's stage namespace, for the observations.
  local seen_stage_marks = {}
  local function watch_stage_marks(bufnr)
    for _, mark in ipairs(api.nvim_buf_get_extmarks(bufnr, stages.ns, 0, -1, { details = true })) do
      local details = mark[4] or {}
      local chunks = details.virt_text or {}
      local label = chunks[1] and chunks[1][1]
      if label and not vim.tbl_contains(seen_stage_marks, label) then
        table.insert(seen_stage_marks, label)
      end
    end
  end

  -- Wait (at most ms) until the daemon's engine runs nothing and nothing waits for it: a file
  -- just opened is read in the background, and while that holds the engine's sequences a
  -- completion's candidates have none to branch into. Says whether it became idle.
  local function wait_for_idle_engine(ms)
    local probe = "import json, sys, urllib.request as u\n"
      .. "h = json.load(u.urlopen(sys.argv[1] + '/health', timeout=5))\n"
      .. "print(h['queue_depth'] + h['engine'].get('running', 0)"
      .. " + h['workload'].get('windows_warming', 0))"
    return vim.wait(ms, function()
      local done = vim.system({ T.python, "-c", probe, T.daemon_url }, { text = true }):wait()
      return done.code == 0 and vim.trim(done.stdout) == "0"
    end, 250)
  end

  -- Send one request through the attached client and wait for its answer.
  local function request(client, bufnr, method, params, ms)
    local answer
    local sent = compat.request(client, method, params, function(err, result)
      answer = { err = err, result = result }
    end, bufnr)
    H.check(sent, method .. " was not sent")
    return H.wait(ms, "the answer to " .. method, function()
      watch_stage_marks(bufnr)
      return answer
    end)
  end

  ---------------------------------------------------------------------------------------------
  H.step("attach")
  local loader, client = open(T.files.loader)
  out.attach = {
    client_id = client.id,
    root_dir = compat.root_dir(client),
    inline_enabled = vim.lsp.inline_completion ~= nil
      and vim.lsp.inline_completion.is_enabled({ bufnr = loader }),
    has_inline_provider = client.server_capabilities.inlineCompletionProvider ~= nil,
  }

  H.step("status ready")
  out.status_ready = H.wait(WAIT.ready, "the daemon status to be ready", function()
    local current = assist.status()
    return current and current.state == "ready" and current
  end)

  ---------------------------------------------------------------------------------------------
  H.step("inline completion request")
  local position = end_position(loader)
  local inline = request(client, loader, "textDocument/inlineCompletion", {
    textDocument = { uri = vim.uri_from_bufnr(loader) },
    position = position,
    context = { triggerKind = 1 }, -- Invoked
  }, WAIT.answer)
  H.check(not inline.err, "inlineCompletion failed: " .. vim.inspect(inline.err))
  local items = (inline.result or {}).items or inline.result or {}
  out.inline = { position = position, items = {} }
  for _, item in ipairs(items) do
    local text = type(item.insertText) == "table" and item.insertText.value or item.insertText
    table.insert(out.inline.items, { insert_text = text, command = item.command })
  end
  watch_stage_marks(loader)
  out.stage_marks = seen_stage_marks
  out.last_stage = stages.last(loader)

  ---------------------------------------------------------------------------------------------
  H.step("completion list")
  local typing, typing_client = open(T.files.typing)
  local completion = request(typing_client, typing, "textDocument/completion", {
    textDocument = { uri = vim.uri_from_bufnr(typing) },
    position = end_position(typing),
  }, WAIT.answer)
  H.check(not completion.err, "completion failed: " .. vim.inspect(completion.err))
  local list = completion.result or {}
  out.completion = { client_id = typing_client.id, items = {} }
  for _, item in ipairs(list.items or list) do
    table.insert(out.completion.items, {
      label = item.label,
      new_text = item.textEdit and item.textEdit.newText,
      start_character = item.textEdit and item.textEdit.range.start.character,
    })
  end
  out.completion.cursor_character = end_position(typing).character

  ---------------------------------------------------------------------------------------------
  -- What a user does: type in Insert mode at the end of the empty body, see the ghost text,
  -- accept it (what a <Tab> mapping to vim.lsp.inline_completion.get() does).
  H.step("ghost text")
  out.ghost = { available = compat.inline_completion() ~= nil }
  if out.ghost.available then
    vim.cmd.buffer(loader)
    local before = text_of(loader)
    local last = api.nvim_buf_line_count(loader)
    api.nvim_win_set_cursor(0, { last, 0 })
    api.nvim_feedkeys("A", "n", false) -- Insert mode at the end of the line
    local ghost_ns = api.nvim_create_namespace("nvim.lsp.inline_completion")
    local marks = H.wait(WAIT.answer, "ghost text in Insert mode", function()
      if api.nvim_get_mode().mode ~= "i" then
        return nil
      end
      local found = api.nvim_buf_get_extmarks(loader, ghost_ns, 0, -1, { details = true })
      return #found > 0 and found
    end)
    local details = marks[1][4] or {}
    out.ghost.virt_text = details.virt_text and details.virt_text[1] and details.virt_text[1][1]
    out.ghost.virt_lines = #(details.virt_lines or {})
    out.ghost.accepted = vim.lsp.inline_completion.get()
    H.wait(WAIT.short, "the accepted completion in the buffer", function()
      return text_of(loader) ~= before
    end)
    out.ghost.before = before
    out.ghost.after = text_of(loader)
    api.nvim_feedkeys(api.nvim_replace_termcodes("<Esc>", true, false, true), "n", false)
    H.wait(WAIT.short, "Normal mode", function()
      return api.nvim_get_mode().mode == "n"
    end)
    -- Leave the file as it was, so nothing else depends on what the model wrote.
    vim.cmd("silent! undo 0")
    vim.bo[loader].modified = false
  end

  ---------------------------------------------------------------------------------------------
  -- Several candidates: the inline items of a statement the model can finish in several ways,
  -- then, as ghost text, cycled to the next one (what a mapping to
  -- vim.lsp.inline_completion.select() does).
  H.step("candidates")
  local cycle, cycle_client = open(T.files.cycle)
  local idle = wait_for_idle_engine(WAIT.answer)
  local listed = request(cycle_client, cycle, "textDocument/inlineCompletion", {
    textDocument = { uri = vim.uri_from_bufnr(cycle) },
    position = end_position(cycle),
    context = { triggerKind = 1 },
  }, WAIT.answer)
  H.check(not listed.err, "inlineCompletion failed: " .. vim.inspect(listed.err))
  out.candidates = { items = {}, idle_before = idle }
  for _, item in ipairs((listed.result or {}).items or listed.result or {}) do
    local text = type(item.insertText) == "table" and item.insertText.value or item.insertText
    table.insert(out.candidates.items, text)
  end
  if compat.inline_completion() ~= nil then
    local ghost_ns = api.nvim_create_namespace("nvim.lsp.inline_completion")
    local function ghost()
      local found = api.nvim_buf_get_extmarks(cycle, ghost_ns, 0, -1, { details = true })
      local details = found[1] and found[1][4] or {}
      local chunks = {}
      for _, chunk in ipairs(details.virt_text or {}) do
        table.insert(chunks, chunk[1])
      end
      return #chunks > 0 and table.concat(chunks) or nil
    end
    api.nvim_win_set_cursor(0, { api.nvim_buf_line_count(cycle), 0 })
    api.nvim_feedkeys("A", "n", false)
    out.candidates.first = H.wait(WAIT.answer, "ghost text in the candidates file", function()
      return api.nvim_get_mode().mode == "i" and ghost()
    end)
    vim.lsp.inline_completion.select({ bufnr = cycle, count = 1 })
    out.candidates.next = H.wait(WAIT.short, "the next candidate as ghost text", function()
      local now = ghost()
      return now ~= out.candidates.first and now
    end)
    api.nvim_feedkeys(api.nvim_replace_termcodes("<Esc>", true, false, true), "n", false)
    H.wait(WAIT.short, "Normal mode", function()
      return api.nvim_get_mode().mode == "n"
    end)
    vim.bo[cycle].modified = false
  end

  ---------------------------------------------------------------------------------------------
  H.step("fix")
  local broken, broken_client = open(T.files.broken)
  local fix_result
  api.nvim_create_autocmd("User", {
    pattern = "AssistFixDone",
    once = true,
    callback = function(args)
      fix_result = args.data
    end,
  })
  vim.cmd("AssistFix!")
  fix_result = H.wait(WAIT.fix, ":AssistFix! to finish", function()
    return fix_result
  end)
  out.fix = {
    client_id = broken_client.id,
    result = fix_result,
    modified = vim.bo[broken].modified,
    text = text_of(broken),
  }

  ---------------------------------------------------------------------------------------------
  -- The quick fix, as a user picks it: vim.lsp.buf.code_action on the broken line; Neovim
  -- resolves the action (codeAction/resolve computes the fix) and applies its edit.
  H.step("code action")
  local quick, quick_client = open(T.files.quick_fix)
  local quick_before = text_of(quick)
  local titles = {}
  local original_select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice) -- never block on a menu: pick the first
    for _, item in ipairs(items) do
      local action = item.action or item[2] or item
      table.insert(titles, action.title)
    end
    on_choice(items[1], 1)
  end
  api.nvim_win_set_cursor(0, { T.quick_fix_line, 0 })
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      table.insert(titles, action.title)
      return action.title:find("^Fix with assist") ~= nil
    end,
  })
  local ok_quick, err_quick = pcall(H.wait, WAIT.fix, "the quick fix to be applied", function()
    return text_of(quick) ~= quick_before
  end)
  vim.ui.select = original_select
  H.check(ok_quick, tostring(err_quick))
  out.code_action = { client_id = quick_client.id, titles = titles, text = text_of(quick) }

  ---------------------------------------------------------------------------------------------
  H.step("status")
  out.status = assist.status()
  out.statusline = assist.statusline()
  local count = #out.notifications
  vim.cmd("AssistStatus")
  out.status_command = out.notifications[count + 1]

  ---------------------------------------------------------------------------------------------
  H.step("another root")
  local other, other_client = open(T.files.other)
  out.other_root = {
    client_id = other_client.id,
    root_dir = compat.root_dir(other_client),
    clients = #vim.lsp.get_clients({ name = "assist" }),
    bufnr = other,
  }

  ---------------------------------------------------------------------------------------------
  -- Neovim 0.11 (no inline completion): vim.lsp.completion and the LSP omnifunc; 0.8 to 0.10:
  -- 'omnifunc'. Simulated by hiding the newer APIs from the plugin's feature checks.
  H.step("fallbacks")
  local real_inline, real_completion = compat.inline_completion, compat.lsp_completion
  local completion_module = vim.lsp.completion
  local real_enable = completion_module.enable
  local enabled = {}
  completion_module.enable = function(enable, client_id, bufnr, opts)
    table.insert(enabled, { enable = enable, bufnr = bufnr, autotrigger = opts and opts.autotrigger })
    return real_enable(enable, client_id, bufnr, opts)
  end
  compat.inline_completion = function()
    return nil
  end
  local ok, err = pcall(function()
    local items_buf = open(T.files.fallback_items)
    out.fallback_items = {
      bufnr = items_buf,
      enable_calls = enabled,
      omnifunc = vim.bo[items_buf].omnifunc,
      inline_enabled = vim.lsp.inline_completion.is_enabled({ bufnr = items_buf }),
    }
    compat.lsp_completion = function()
      return nil
    end
    local omni_buf = open(T.files.fallback_omnifunc)
    out.fallback_omnifunc = {
      omnifunc = vim.bo[omni_buf].omnifunc,
      enable_calls = #enabled,
      inline_enabled = vim.lsp.inline_completion.is_enabled({ bufnr = omni_buf }),
    }
  end)
  compat.inline_completion, compat.lsp_completion = real_inline, real_completion
  completion_module.enable = real_enable
  H.check(ok, tostring(err))

  ---------------------------------------------------------------------------------------------
  -- setup() again sends the new settings to the running servers; a bad value comes back as the
  -- server's warning, through the plugin's window/showMessage handler.
  H.step("settings pushed")
  local settings = vim.tbl_extend("force", T.setup.settings, { maxTokens = -3 })
  assist.setup(vim.tbl_extend("force", T.setup, { settings = settings }))
  out.settings_warning = H.wait(WAIT.short, "the server's warning about maxTokens", function()
    for _, note in ipairs(out.notifications) do
      if note.step == "settings pushed" and note.message:find("maxTokens", 1, true) then
        return note
      end
    end
  end)
  assist.setup(T.setup)

  ---------------------------------------------------------------------------------------------
  H.step("stop")
  local ids = {}
  for _, c in ipairs(vim.lsp.get_clients({ name = "assist" })) do
    table.insert(ids, c.id)
  end
  vim.lsp.stop_client(ids)
  H.wait(WAIT.stop, "the language servers to exit", function()
    return #vim.lsp.get_clients({ name = "assist" }) == 0
  end)
  H.wait(WAIT.short, "the stopped status", function()
    local current = require("assist.status").get(client.id)
    return current and current.state == "stopped"
  end)
  out.status_after_stop = require("assist.status").get(client.id)
  H.step("done")
end
