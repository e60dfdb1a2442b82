-- dotprompt: `.prompt` and `*.test.yaml` files talk to `dotprompt lsp` (Neovim 0.7 and later).
-- The server comes from the project's .venv when it has one, else from PATH.
local function project_root(file)
  local pyproject = vim.fn.findfile("pyproject.toml", vim.fn.fnamemodify(file, ":p:h") .. ";")
  return pyproject ~= "" and vim.fn.fnamemodify(pyproject, ":p:h") or vim.fn.getcwd()
end

local function server_cmd(root)
  local venv = root .. "/.venv/bin/dotprompt"
  return vim.fn.executable(venv) == 1 and { venv, "lsp" } or { "dotprompt", "lsp" }
end

vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
  pattern = "*.prompt",
  callback = function() vim.bo.filetype = "dotprompt" end,
})

local servers = {} -- Neovim 0.7: project root -> client id, one server per project
vim.api.nvim_create_autocmd("FileType", {
  pattern = { "dotprompt", "yaml" },
  callback = function(args)
    local file = vim.api.nvim_buf_get_name(args.buf)
    if vim.bo[args.buf].filetype == "yaml" and not file:match("%.test%.yaml$") then return end
    local root = project_root(file)
    local config = { name = "dotprompt", cmd = server_cmd(root), root_dir = root }
    if vim.lsp.start then -- 0.8 and later: reuses the project's server
      vim.lsp.start(config)
      return -- (not `return vim.lsp.start(...)`: a callback that returns true deletes its autocmd)
    end
    local id = servers[root]
    if not (id and vim.lsp.get_client_by_id(id)) then
      id = vim.lsp.start_client(config)
      servers[root] = id
    end
    vim.lsp.buf_attach_client(args.buf, id)
  end,
})
