// An older upstream server (revision 2025-11-25): the TypeScript SDK v1
// (@modelcontextprotocol/sdk, McpServer over StdioServerTransport), for the process tests in
// bridge/tests/it/older_upstream.rs. Its tools use the SDK's own machinery: a form
// elicitation (elicitInput) and a list change (a tool registered after the start).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "ts-v1-older", version: "1.32.2" });

server.registerTool(
  "add",
  { description: "Adds two numbers", inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
);

server.registerTool("ask_name", { description: "Asks for a name with a form" }, async () => {
  const answer = await server.server.elicitInput({
    message: "Your name?",
    requestedSchema: {
      type: "object",
      properties: { name: { type: "string" } },
      required: ["name"],
    },
  });
  const text = answer.action === "accept" ? `hello ${answer.content.name}` : `no name (${answer.action})`;
  return { content: [{ type: "text", text }] };
});

server.registerTool("toggle", { description: "Adds the tool extra" }, async () => {
  // The SDK sends notifications/tools/list_changed when a tool is registered after connect.
  server.registerTool("extra", { description: "Added by toggle" }, async () => ({
    content: [{ type: "text", text: "extra" }],
  }));
  return { content: [{ type: "text", text: "toggled" }] };
});

await server.connect(new StdioServerTransport());
