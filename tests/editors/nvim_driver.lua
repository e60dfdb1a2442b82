-- Drives a real `nvim --headless` as a user would: the documented setup (editors/neovim/dotprompt.lua),
-- a .prompt file with an error opened, its diagnostic read, a completion asked for, a partial
-- followed with go-to-definition. Everything seen goes to a JSON transcript ($DOTPROMPT_NVIM_TRANSCRIPT).
local transcript = { steps = {} }
local WAIT = tonumber(os.getenv("DOTPROMPT_NVIM_WAIT_MS") or "30000")

local function step(name, value)
  table.insert(transcript.steps, { step = name, value = value })
end

local function finish(ok)
  transcript.ok = ok
  local out = io.open(os.getenv("DOTPROMPT_NVIM_TRANSCRIPT"), "w")
  out:write(vim.fn.json_encode(transcript))
  out:close()
  vim.cmd(ok and "qall!" or "cquit!")
end

local function clients(buf)
  local get = vim.lsp.get_clients or vim.lsp.buf_get_clients
  local found = vim.lsp.get_clients and get({ bufnr = buf }) or get(buf)
  return vim.tbl_values(found)
end

-- The cursor on the first match of `pattern` in the buffer, `offset` characters after its start.
local function put_cursor(pattern, offset)
  for lnum, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
    local col = line:find(pattern, 1, true)
    if col then
      vim.api.nvim_win_set_cursor(0, { lnum, col - 1 + offset })
      return { line = lnum, col = col - 1 + offset, text = line }
    end
  end
  error("no " .. pattern .. " in the buffer")
end

local function run()
  dofile(os.getenv("DOTPROMPT_NVIM_SETUP"))
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("DOTPROMPT_NVIM_FILE")))
  local buf = vim.api.nvim_get_current_buf()
  step("filetype", vim.bo[buf].filetype)
  assert(vim.wait(WAIT, function() return #clients(buf) > 0 end, 20), "no language client attached")
  local client = clients(buf)[1]
  step("attached", { name = client.name, cmd = client.config.cmd })

  assert(vim.wait(WAIT, function() return #vim.diagnostic.get(buf) > 0 end, 20), "no diagnostic published")
  local diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(diagnostics, { lnum = d.lnum, col = d.col, end_col = d.end_col, severity = d.severity,
                                message = d.message, code = d.code, source = d.source })
  end
  step("diagnostics", diagnostics)

  step("completion at", put_cursor("customer.", #"customer."))
  local replies = vim.lsp.buf_request_sync(buf, "textDocument/completion", vim.lsp.util.make_position_params(), WAIT)
  local labels = {}
  for _, reply in pairs(replies or {}) do
    assert(not reply.err, "completion failed: " .. vim.inspect(reply.err))
    local items = reply.result and (reply.result.items or reply.result) or {}
    for _, item in ipairs(items) do table.insert(labels, item.label) end
  end
  table.sort(labels)
  step("completion", labels)

  local test_file = os.getenv("DOTPROMPT_NVIM_FILE"):gsub("%.prompt$", ".test.yaml")
  vim.cmd("edit " .. vim.fn.fnameescape(test_file))
  local test_buf = vim.api.nvim_get_current_buf()
  assert(vim.wait(WAIT, function() return #clients(test_buf) > 0 end, 20), "no client attached to the test file")
  step("test file attached", { filetype = vim.bo[test_buf].filetype, client = clients(test_buf)[1].id == client.id })
  vim.cmd("buffer " .. buf)

  step("definition at", put_cursor('"style"', 2))
  vim.lsp.buf.definition()
  local jumped = vim.wait(WAIT, function() return vim.api.nvim_buf_get_name(0):match("_style%.prompt$") ~= nil end, 20)
  step("definition", { buffer = vim.api.nvim_buf_get_name(0), cursor = vim.api.nvim_win_get_cursor(0),
                       first_line = vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] })
  assert(jumped, "go to definition did not open the partial")
end

vim.defer_fn(function()
  local ok, err = xpcall(run, debug.traceback)
  if not ok then step("error", err) end
  finish(ok)
end, 0)
