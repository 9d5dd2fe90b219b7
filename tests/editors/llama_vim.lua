-- ggml-org's llama.vim against the daemon's /infill, with its default configuration: the ring
-- buffer's warm-up of a chunk of another file, the first request (250 ms for the generation),
-- the speculative request it sends once the suggestion is shown, and the same request again
-- (llama.vim's own cache left out). Each suggestion is read from its ghost text.
return function(H)
  local T = H.config
  local out = H.out
  local api = vim.api
  local uv = vim.uv or vim.loop
  local ns = api.nvim_create_namespace("vt_fim")

  local function pause(ms)
    uv.update_time()
    local until_ms = uv.now() + ms
    H.wait(ms + 1000, ("%d ms"):format(ms), function()
      uv.update_time()
      return uv.now() >= until_ms
    end)
  end

  -- The suggestion shown: its first line and info (one mark's virtual text), and the lines
  -- below it (another mark's virtual lines).
  local function ghost()
    local shown
    local rest = {}
    for _, mark in ipairs(api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
      local text = mark[4].virt_text
      if text and text[1] then
        shown = { first = text[1][1], info = text[2] and text[2][1] or "" }
      end
      for _, chunks in ipairs(mark[4].virt_lines or {}) do
        table.insert(rest, chunks[1] and chunks[1][1] or "")
      end
    end
    if shown then
      shown.rest = rest
    end
    return shown
  end

  local function suggestion(use_cache)
    vim.fn["llama#fim_hide"]()
    local began = uv.hrtime()
    vim.fn["llama#fim"](-1, -1, false, {}, use_cache)
    local shown = H.wait(T.wait_ms.answer, "llama.vim's ghost text", ghost)
    shown.ms = (uv.hrtime() - began) / 1e6
    return shown
  end

  H.step("ring")
  -- A chunk of another file: picked when its buffer is entered and left, then sent by the
  -- ring buffer's timer (every second, in normal mode) as a warm-up request.
  vim.cmd.edit(vim.fn.fnameescape(T.files.other))
  pause(500)
  vim.cmd.edit(vim.fn.fnameescape(T.files.main))
  pause(T.wait_ms.ring)

  H.step("first")
  api.nvim_win_set_cursor(0, { T.line, 0 })
  vim.cmd("startinsert!")
  H.tick()
  out.mode = api.nvim_get_mode().mode
  out.first = suggestion(true)

  H.step("speculative")
  -- llama.vim asks at the place after the shown text as soon as it shows it.
  pause(T.wait_ms.speculative)

  H.step("again")
  out.again = suggestion(false)
  vim.cmd("stopinsert")
  H.step("done")
end
