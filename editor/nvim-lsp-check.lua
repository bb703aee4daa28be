-- Drives `mapc lsp` from a real Neovim, headless: opens the file given, waits for the diagnostics
-- the server publishes, asks for completions at LINE:COL (from 0, as LSP counts), prints both and
-- quits. A test runs it where Neovim is installed; docs/editors.md shows the setup it mirrors.
--   MAPC=/path/to/mapc LINE=12 COL=24 nvim --headless -u NONE -c "luafile editor/nvim-lsp-check.lua" mappings/m.yaml
local mapc = os.getenv("MAPC") or "mapc"
local client = vim.lsp.start_client({ name = "mapc", cmd = { mapc, "lsp" }, root_dir = vim.fn.getcwd() })
vim.lsp.buf_attach_client(0, client)
vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 50)
for _, d in ipairs(vim.diagnostic.get(0)) do
  io.stdout:write(string.format("diagnostic %d:%d %s\n", d.lnum + 1, d.col + 1, d.message))
end
local line, col = tonumber(os.getenv("LINE") or "0"), tonumber(os.getenv("COL") or "0")
local responses = vim.lsp.buf_request_sync(0, "textDocument/completion",
  { textDocument = { uri = vim.uri_from_bufnr(0) }, position = { line = line, character = col } }, 20000)
for _, response in pairs(responses or {}) do
  local items = response.result and (response.result.items or response.result) or {}
  for _, item in ipairs(items) do io.stdout:write("completion " .. item.label .. "\n") end
end
vim.lsp.stop_client(client)
vim.cmd("qa!")
