-- The test harness inside Neovim: runs a scenario as a coroutine, so that Neovim's main loop
-- (LSP messages, timers, typed keys) runs between its steps; records observations; writes them
-- as JSON to config.out and exits (0 when the scenario finished, 1 on any error or timeout).
--
-- Every wait is bounded. A watchdog ends the whole run with an error if it overruns.
local uv = vim.uv or vim.loop

local H = {
  out = { notifications = {}, step = nil },
  config = nil,
  finished = false,
}

local POLL_MS = 20

local function write()
  H.out.errmsg = vim.v.errmsg
  local ok, messages = pcall(vim.fn.execute, "messages")
  H.out.messages = ok and messages or nil
  local encoded_ok, encoded = pcall(vim.json.encode, H.out)
  if not encoded_ok then
    encoded = vim.json.encode({
      ok = false,
      error = "could not encode the observations: " .. tostring(encoded),
      step = H.out.step,
      original_error = H.out.error,
    })
  end
  vim.fn.writefile({ encoded }, H.config.out)
end

function H.fail(err)
  if H.finished then
    return
  end
  H.finished = true
  H.out.ok = false
  H.out.error = tostring(err)
  pcall(write)
  vim.cmd("cquit 1")
end

function H.finish()
  if H.finished then
    return
  end
  H.finished = true
  H.out.ok = true
  local ok, err = pcall(write)
  if not ok then
    io.stderr:write("could not write the observations: " .. tostring(err) .. "\n")
    vim.cmd("cquit 1")
  end
  vim.cmd("qall!")
end

--- Install the recorders and the watchdog; called by the generated init.lua before setup().
function H.start(config)
  H.config = config
  -- Every vim.notify (the plugin's and Neovim's LSP client's) is recorded, not printed.
  vim.notify = function(message, level)
    table.insert(H.out.notifications, {
      message = tostring(message),
      level = level or vim.log.levels.INFO,
      step = H.out.step,
    })
  end
  vim.defer_fn(function()
    H.fail(("watchdog: the scenario did not finish within %d ms (step: %s)"):format(
      config.watchdog_ms,
      tostring(H.out.step)
    ))
  end, config.watchdog_ms)
end

function H.resume()
  if H.finished then
    return
  end
  local ok, err = coroutine.resume(H.co)
  if not ok then
    H.fail(debug.traceback(H.co, tostring(err)))
  elseif coroutine.status(H.co) == "dead" then
    H.finish()
  end
end

--- Run the scenario file (a function of H) once Neovim has started.
function H.run(path)
  vim.api.nvim_create_autocmd("VimEnter", {
    once = true,
    callback = function()
      local scenario = dofile(path)
      H.co = coroutine.create(function()
        scenario(H)
      end)
      -- Leave the VimEnter callback first: the scenario types keys and waits.
      vim.schedule(H.resume)
    end,
  })
end

--- Name the step being run (reported with a failure).
function H.step(name)
  H.out.step = name
end

--- Wait (yielding to Neovim's main loop) until cond() returns a true value, and return it;
--- raise an error after ms milliseconds.
function H.wait(ms, what, cond)
  uv.update_time()
  local deadline = uv.now() + ms
  while true do
    local value = cond()
    if value then
      return value
    end
    uv.update_time()
    if uv.now() >= deadline then
      error(("timed out after %d ms waiting for %s"):format(ms, what), 2)
    end
    vim.defer_fn(H.resume, POLL_MS)
    coroutine.yield()
  end
end

--- Give the main loop one turn (queued keys, scheduled callbacks).
function H.tick()
  vim.defer_fn(H.resume, POLL_MS)
  coroutine.yield()
end

function H.check(condition, message)
  if not condition then
    error(message, 2)
  end
  return condition
end

return H
