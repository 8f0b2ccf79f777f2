// The TypeScript MCP SDK's own client against stream-browser (tests/test_mcp_clients.py).
// usage: node mcp_ts_client.mjs SDK_DIR PLAN_JSON
//   PLAN: {"transport": "http", "url", "token" or "headers"} or {"transport": "stdio", "command", "args",
//          "env", "cwd"}, plus "calls": [[tool, arguments], ...]
// Prints one JSON object: the tool names, and per call its isError, text and structured
// content, or the error the SDK threw (a schema mismatch shows up here).
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, planJson] = process.argv.slice(2);
const plan = JSON.parse(planJson);
const load = (path) => import(pathToFileURL(join(sdkDir, "dist/esm", path)).href);
const { Client } = await load("client/index.js");

async function transport() {
  if (plan.transport === "http") {
    const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
    const headers = plan.headers ?? (plan.token ? { Authorization: `Bearer ${plan.token}` } : {});
    return new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers } });
  }
  const { StdioClientTransport } = await load("client/stdio.js");
  return new StdioClientTransport({
    command: plan.command, args: plan.args, env: plan.env, cwd: plan.cwd, stderr: "ignore",
  });
}

const client = new Client({ name: "ts-sdk-test", version: "1.0.0" });
const out = { tools: [], calls: [] };
try {
  await client.connect(await transport());
  out.tools = (await client.listTools()).tools.map((tool) => tool.name);
  for (const [name, args] of plan.calls) {
    try {
      const result = await client.callTool({ name, arguments: args });
      const text = result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
      out.calls.push({ name, isError: Boolean(result.isError), text,
                       structured: result.structuredContent ?? null });
    } catch (error) {
      out.calls.push({ name, thrown: String(error) });
    }
  }
} catch (error) {
  out.connectError = String(error);
} finally {
  await client.close().catch(() => {});
}
console.log(JSON.stringify(out));
