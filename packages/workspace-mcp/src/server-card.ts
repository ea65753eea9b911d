/**
 * The public server card (docs/mcp-surface.md, "Discovery documents"): static, generated from the same catalog the
 * endpoint serves, nothing workspace-specific. Output is deterministic (fixed key order, no timestamps) so a committed
 * copy can be compared byte for byte to detect drift.
 */
import { CATALOG, toolIconUrls } from './catalog.js';
import { SERVER_TITLE } from './context.js';
import { type Icon, serverIcons } from './icons.js';
import { AVAILABLE_PROMPTS, promptDescriptor } from './prompts.js';
import { SERVED_PROTOCOL_VERSIONS } from './protocol.js';
import { DIRECT_RESOURCES, RESOURCE_TEMPLATES } from './resource-catalog.js';
import { describeTemplate, type ResourceAnnotations } from './resources.js';
import { TOOLSET_DESCRIPTIONS, TOOLSETS } from './schemas.js';
import { TASKS_CAPABILITY_V1, TASKS_EXTENSION_ID } from './tasks.js';
import type { ToolDescriptor } from './tool.js';

export const SERVER_CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';
export const SERVER_CARD_NAME = 'io.flowgate/workspace-mcp';
export const SERVER_CARD_DESCRIPTION =
  'One MCP server per Flowgate workspace: find, inspect, run and debug flows.';
/** Placeholder host when the build step is not given the deployment's public URL. */
export const SERVER_CARD_DEFAULT_BASE_URL = 'https://flowgate.example.com';
/** SEP-2127's media type for a card (and the AI Catalog entry `type` that points at one). */
export const SERVER_CARD_MEDIA_TYPE = 'application/mcp-server-card+json';
export const FLOW_SERVER_CARD_NAME = 'io.flowgate/flow-mcp';
export const FLOW_SERVER_CARD_DESCRIPTION =
  "One Flowgate flow's MCP interfaces as direct tools, plus the tools to follow its runs.";

export interface ServerCardHeader {
  name: string;
  description: string;
  isRequired: boolean;
  isSecret: boolean;
}

export interface ServerCardRemote {
  type: 'streamable-http';
  url: string;
  variables: Record<string, { description: string; isRequired: boolean }>;
  headers: ServerCardHeader[];
  supportedProtocolVersions: string[];
}

/**
 * A card as SEP-2127 defines it (the Server Card extension's `ServerCard`): identity and how to connect, no tool,
 * resource or prompt lists. Served at `<endpoint>/server-card`.
 */
export interface EndpointServerCard {
  $schema: string;
  name: string;
  title: string;
  version: string;
  description: string;
  icons: Icon[];
  remotes: ServerCardRemote[];
}

/** The scanners' card (`/.well-known/mcp/server-card.json`): the SEP-2127 fields plus the catalog they read. */
export interface ServerCard extends EndpointServerCard {
  supportedProtocolVersions: string[];
  authentication: { required: true; schemes: ['bearer'] };
  capabilities: {
    tools: Record<string, never>;
    resources: Record<string, never>;
    prompts: Record<string, never>;
    /** 2025-11-25 experimental Tasks, offered to keys that can run flows (tasks.ts). */
    tasks: typeof TASKS_CAPABILITY_V1;
    /** 2026-07-28: the Tasks extension, offered to the same keys. */
    extensions: { [TASKS_EXTENSION_ID]: Record<string, never> };
  };
  toolsets: { name: string; description: string }[];
  tools: ToolDescriptor[];
  resources: {
    uri: string;
    name: string;
    title: string;
    description: string;
    mimeType: string;
    annotations: ResourceAnnotations;
  }[];
  resourceTemplates: ReturnType<typeof describeTemplate>[];
  prompts: ReturnType<typeof promptDescriptor>[];
}

const HEADERS: readonly ServerCardHeader[] = [
  {
    name: 'Authorization',
    description: 'Bearer token: "Bearer <Flowgate service-account API key or identity-provider JWT>".',
    isRequired: true,
    isSecret: true,
  },
  {
    name: 'X-MCP-Toolsets',
    description: `Comma list of toolsets to keep (${TOOLSETS.join(', ')}, or all).`,
    isRequired: false,
    isSecret: false,
  },
  {
    name: 'X-MCP-Tools',
    description: 'Comma list of tool names: alone only these; with X-MCP-Toolsets added to them.',
    isRequired: false,
    isSecret: false,
  },
  {
    name: 'X-MCP-Exclude-Tools',
    description: 'Comma list of tool names to hide; wins over everything.',
    isRequired: false,
    isSecret: false,
  },
  {
    name: 'X-MCP-Readonly',
    description: 'true to hide tools that change state (send_feedback stays).',
    isRequired: false,
    isSecret: false,
  },
];

const WORKSPACE_ID_VARIABLE = {
  description: 'Workspace id, e.g. ws-acme (^[a-z0-9][a-z0-9-]{1,62}$).',
  isRequired: true,
};

function baseUrlOf(publicBaseUrl: string | undefined): string {
  return (publicBaseUrl ?? SERVER_CARD_DEFAULT_BASE_URL).replace(/\/+$/, '');
}

/** The workspace endpoint's `remotes` entry, shared by the scanners' card and the SEP-2127 endpoint card. */
function workspaceRemote(base: string): ServerCardRemote {
  return {
    type: 'streamable-http',
    url: `${base}/api/workspaces/{workspace_id}/mcp`,
    variables: { workspace_id: { ...WORKSPACE_ID_VARIABLE } },
    headers: HEADERS.map((h) => ({ ...h })),
    supportedProtocolVersions: [...SERVED_PROTOCOL_VERSIONS],
  };
}

export function buildServerCard(options: { publicBaseUrl?: string; version: string }): ServerCard {
  const base = baseUrlOf(options.publicBaseUrl);
  const versions = [...SERVED_PROTOCOL_VERSIONS];
  return {
    $schema: SERVER_CARD_SCHEMA,
    name: SERVER_CARD_NAME,
    title: SERVER_TITLE,
    version: options.version,
    description: SERVER_CARD_DESCRIPTION,
    icons: serverIcons(),
    remotes: [workspaceRemote(base)],
    supportedProtocolVersions: [...versions],
    authentication: { required: true, schemes: ['bearer'] },
    // Tasks are offered only to keys that can run flows; the tools that take them say so in `execution`.
    capabilities: {
      tools: {},
      resources: {},
      prompts: {},
      tasks: TASKS_CAPABILITY_V1,
      extensions: { [TASKS_EXTENSION_ID]: {} },
    },
    toolsets: TOOLSETS.map((name) => ({ name, description: TOOLSET_DESCRIPTIONS[name] })),
    // Each with its icon's URL on this deployment, as tools/list (2025-11-25 and later) lists it.
    tools: CATALOG.map((t) => ({ ...t.descriptor, icons: toolIconUrls(t, base) })),
    resources: DIRECT_RESOURCES.map((r) => {
      const annotations: ResourceAnnotations = { audience: [...r.audience], priority: r.priority };
      // Live resources have no fixed revision; the card stays free of timestamps.
      if (r.lastModified !== 'live') annotations.lastModified = r.lastModified;
      return {
        uri: r.uriPattern,
        name: r.name,
        title: r.title,
        description: r.description,
        mimeType: r.mimeType,
        annotations,
      };
    }),
    resourceTemplates: RESOURCE_TEMPLATES.map((t) => describeTemplate(t, '2025-11-25')),
    prompts: AVAILABLE_PROMPTS.map((p) => promptDescriptor(p)),
  };
}

/**
 * Stable text form for the committed file and the HTTP body (ETag input). Takes any object: the gateway serialises
 * the committed card as it imports it (JSON, so its tuple and literal types are widened).
 */
export function serializeServerCard(card: object): string {
  return `${JSON.stringify(card, null, 2)}\n`;
}

/**
 * The two SEP-2127 endpoint cards. Generic on purpose: the same bytes for every workspace and flow (templated
 * `remotes` URLs), so a card request reveals nothing and needs no lookup.
 */
export function buildEndpointServerCards(options: { publicBaseUrl?: string; version: string }): {
  workspace: EndpointServerCard;
  flow: EndpointServerCard;
} {
  const base = baseUrlOf(options.publicBaseUrl);
  const flowRemote: ServerCardRemote = {
    type: 'streamable-http',
    url: `${base}/api/workspaces/{workspace_id}/flows/{flow_slug}/mcp`,
    variables: {
      workspace_id: { ...WORKSPACE_ID_VARIABLE },
      flow_slug: {
        description: 'Slug of a flow with :mcp interfaces, e.g. triage-ticket.',
        isRequired: true,
      },
    },
    // The narrowing headers accept the catalog's names on both endpoints, so the same set is offered.
    headers: HEADERS.map((h) => ({ ...h })),
    supportedProtocolVersions: [...SERVED_PROTOCOL_VERSIONS],
  };
  return {
    workspace: {
      $schema: SERVER_CARD_SCHEMA,
      name: SERVER_CARD_NAME,
      title: SERVER_TITLE,
      version: options.version,
      description: SERVER_CARD_DESCRIPTION,
      icons: serverIcons(),
      remotes: [workspaceRemote(base)],
    },
    flow: {
      $schema: SERVER_CARD_SCHEMA,
      name: FLOW_SERVER_CARD_NAME,
      title: SERVER_TITLE,
      version: options.version,
      description: FLOW_SERVER_CARD_DESCRIPTION,
      icons: serverIcons(),
      remotes: [flowRemote],
    },
  };
}
