/** Identity of the curated MCP docs; the texts live next to this file and are rendered on read. */
export const DOC_IDS = ['overview', 'client-setup', 'flow-authoring', 'tool-safety'] as const;
export type DocId = (typeof DOC_IDS)[number];

/** Revision date of the docs texts (resource annotation `lastModified`); bump it when a text changes. */
export const DOCS_LAST_MODIFIED = '2026-11-27T00:00:00.000Z';

export type Audience = 'user' | 'assistant';

export interface DocMeta {
  id: DocId;
  uri: `flowgate://mcp-docs/${DocId}`;
  name: string;
  title: string;
  description: string;
  audience: readonly Audience[];
  priority: number;
}

export const DOCS_META: readonly DocMeta[] = Object.freeze([
  {
    id: 'overview',
    uri: 'flowgate://mcp-docs/overview',
    name: 'mcp-docs-overview',
    title: 'Flowgate MCP overview',
    description: 'Start here: what this server is, discovery, narrowing, blockers, pagination and errors.',
    audience: ['assistant', 'user'],
    priority: 1,
  },
  {
    id: 'client-setup',
    uri: 'flowgate://mcp-docs/client-setup',
    name: 'mcp-docs-client-setup',
    title: 'Client setup',
    description: 'Configuration snippets for Codex, Claude Code, Cursor, VS Code and other MCP clients.',
    audience: ['user', 'assistant'],
    priority: 0.5,
  },
  {
    id: 'flow-authoring',
    uri: 'flowgate://mcp-docs/flow-authoring',
    name: 'mcp-docs-flow-authoring',
    title: 'Flow authoring',
    description: 'Flow definitions in EDN: pull, draft, validate and approval-gated release.',
    audience: ['assistant'],
    priority: 0.7,
  },
  {
    id: 'tool-safety',
    uri: 'flowgate://mcp-docs/tool-safety',
    name: 'mcp-docs-tool-safety',
    title: 'Tool safety',
    description: 'Capability gates, blockers, approval boundaries, secrets and feedback.',
    audience: ['assistant', 'user'],
    priority: 0.8,
  },
]);

export function isDocId(value: string): value is DocId {
  return (DOC_IDS as readonly string[]).includes(value);
}

export function docUri(id: DocId): `flowgate://mcp-docs/${DocId}` {
  return `flowgate://mcp-docs/${id}`;
}
