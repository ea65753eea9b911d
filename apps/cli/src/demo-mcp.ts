import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

/**
 * A stand-in documentation MCP server for `flowgate dev` (the `answer-from-docs` example calls it): two tools over a
 * few fixed pages, served by the official SDK for both protocol generations (2026-07-28 and the 2025 revisions),
 * stateless, on the demo API's loopback port.
 */

const PAGES: Readonly<Record<string, { title: string; text: string }>> = {
  connections: {
    title: 'Connections',
    text: 'A connection holds a base URL and a secret. Rotate the secret with flowgate connections rotate; runs pick up the new secret at their next step.',
  },
  runs: {
    title: 'Runs',
    text: 'A run executes a released flow version. Runs are durable: a worker that stops mid-run is replaced and the run resumes from its journal.',
  },
  flowgate: {
    title: 'Flowgate',
    text: 'Flowgate gives agents one MCP server per workspace and runs flows for them.',
  },
};

function find(query: string): string[] {
  // Words of four letters or more: "how do I …" should not match every page.
  const terms = query
    .toLowerCase()
    .split(/\W+/)
    .filter((t) => t.length >= 4);
  const hits = Object.entries(PAGES)
    .filter(([id, page]) => terms.some((t) => id.includes(t) || page.text.toLowerCase().includes(t)))
    .map(([id]) => id);
  return hits.length > 0 ? hits : ['flowgate'];
}

function demoServer(): McpServer {
  const server = new McpServer({ name: 'flowgate-demo-docs', version: '1.0.0' });
  server.registerTool(
    'search_docs',
    {
      description: 'Search the documentation; returns page ids.',
      inputSchema: { query: z.string().max(200) },
      annotations: { readOnlyHint: true },
    },
    async ({ query }) => {
      const ids = find(query);
      return {
        content: [{ type: 'text', text: ids.join(', ') }],
        structuredContent: { pages: ids.map((id) => ({ id, title: PAGES[id]?.title ?? id })) },
      };
    },
  );
  server.registerTool(
    'read_page',
    {
      description: 'Read one documentation page by topic.',
      inputSchema: { topic: z.string().max(100) },
      annotations: { readOnlyHint: true },
    },
    async ({ topic }) => {
      const id = find(topic)[0] ?? 'flowgate';
      return { content: [{ type: 'text', text: PAGES[id]?.text ?? '' }] };
    },
  );
  return server;
}

export interface DemoMcp {
  fetch(request: Request): Promise<Response>;
  close(): Promise<void>;
}

export function createDemoMcp(): DemoMcp {
  const handler = createMcpHandler(demoServer);
  return { fetch: (request) => handler.fetch(request), close: () => handler.close() };
}
