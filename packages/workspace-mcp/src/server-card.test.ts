import { describe, expect, it } from 'vitest';
import { CATALOG } from './catalog.js';
import { SERVER_ICON_SVG, serverIcons } from './icons.js';
import {
  buildEndpointServerCards,
  buildServerCard,
  SERVER_CARD_DESCRIPTION,
  serializeServerCard,
} from './server-card.js';

describe('server card', () => {
  const card = buildServerCard({ publicBaseUrl: 'https://flowgate.test/', version: '1.2.3' });

  it('carries the current server-card fields', () => {
    expect(Object.keys(card)).toEqual([
      '$schema',
      'name',
      'title',
      'version',
      'description',
      'icons',
      'remotes',
      'supportedProtocolVersions',
      'authentication',
      'capabilities',
      'toolsets',
      'tools',
      'resources',
      'resourceTemplates',
      'prompts',
    ]);
    expect(card.$schema).toBe('https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json');
    expect(card.name).toBe('io.flowgate/workspace-mcp');
    expect(card.name.split('/')).toHaveLength(2);
    expect(card.version).toBe('1.2.3');
    expect(SERVER_CARD_DESCRIPTION.length).toBeGreaterThan(0);
    expect(card.description.length).toBeLessThanOrEqual(100);
    expect(card.authentication).toEqual({ required: true, schemes: ['bearer'] });
    expect(card.supportedProtocolVersions).toEqual(['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']);
  });

  it('declares the endpoint template with its workspace_id variable and headers', () => {
    expect(card.remotes).toHaveLength(1);
    const [remote] = card.remotes;
    expect(remote?.type).toBe('streamable-http');
    expect(remote?.url).toBe('https://flowgate.test/api/workspaces/{workspace_id}/mcp');
    expect(remote?.variables.workspace_id?.isRequired).toBe(true);
    expect(remote?.headers.map((h) => [h.name, h.isRequired, h.isSecret])).toEqual([
      ['Authorization', true, true],
      ['X-MCP-Toolsets', false, false],
      ['X-MCP-Tools', false, false],
      ['X-MCP-Exclude-Tools', false, false],
      ['X-MCP-Readonly', false, false],
    ]);
    expect(remote?.supportedProtocolVersions).toEqual(card.supportedProtocolVersions);
  });

  it('lists every tool exactly as tools/list describes it', () => {
    expect(card.tools).toEqual(
      CATALOG.map((t) => ({
        ...t.descriptor,
        icons: [{ src: `https://flowgate.test/icons/${t.toolsets[0]}.svg` }],
      })),
    );
    for (const t of card.tools) {
      // `execution` only on the tools that may run as tasks.
      expect(Object.keys(t)).toEqual([
        'name',
        'title',
        'description',
        'inputSchema',
        'outputSchema',
        'annotations',
        ...(t.name === 'call_flow_tool' ? ['execution'] : []),
        'icons',
      ]);
    }
  });

  it('lists resources, templates and prompts without anything workspace-specific', () => {
    expect(card.resources.map((r) => r.uri)).toEqual([
      'flowgate://workspaces/{workspace_id}/mcp',
      'flowgate://mcp-docs/overview',
      'flowgate://mcp-docs/client-setup',
      'flowgate://mcp-docs/flow-authoring',
      'flowgate://mcp-docs/tool-safety',
    ]);
    expect(card.resources[0]?.annotations.lastModified).toBeUndefined();
    expect(card.resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      'flowgate://mcp-docs/{doc_id}',
      'flowgate://flows/{slug}',
      'flowgate://flows/{slug}/definition/{source}',
      'flowgate://flows/{slug}/versions/{version}/definition',
      'flowgate://flows/{slug}/mcp-tools/{tool_name}',
      'flowgate://runs/{run_id}',
      'flowgate://runs/{run_id}/result',
      'flowgate://runs/{run_id}/events',
    ]);
    expect(card.prompts.map((p) => p.name)).toEqual([
      'review_flow_definition',
      'create_flow_from_goal',
      'publish_flow_safely',
      'debug_failed_run',
    ]);
    const text = serializeServerCard(card);
    expect(text).not.toMatch(/workspaces\/(?!\{workspace_id\})/);
    expect(text).not.toMatch(/fgk_|Bearer [A-Za-z0-9]{8,}/);
  });

  it('is deterministic, so a committed copy can be compared for drift', () => {
    const again = serializeServerCard(
      buildServerCard({ publicBaseUrl: 'https://flowgate.test', version: '1.2.3' }),
    );
    expect(again).toBe(serializeServerCard(card));
    expect(again.endsWith('}\n')).toBe(true);
    expect(JSON.parse(again)).toEqual(card);
  });

  it('uses a placeholder host when no public URL is given', () => {
    expect(buildServerCard({ version: '0.1.0' }).remotes[0]?.url).toBe(
      'https://flowgate.example.com/api/workspaces/{workspace_id}/mcp',
    );
  });
});

describe('SEP-2127 endpoint cards', () => {
  const cards = buildEndpointServerCards({ publicBaseUrl: 'https://flowgate.test/', version: '1.2.3' });
  const scanners = buildServerCard({ publicBaseUrl: 'https://flowgate.test/', version: '1.2.3' });

  it('carry identity and transport only: no tools, resources, prompts or capabilities', () => {
    for (const card of [cards.workspace, cards.flow]) {
      expect(Object.keys(card)).toEqual([
        '$schema',
        'name',
        'title',
        'version',
        'description',
        'icons',
        'remotes',
      ]);
      expect(card.description.length).toBeLessThanOrEqual(100);
      expect(card.version).toBe('1.2.3');
    }
    expect(cards.workspace.name).toBe('io.flowgate/workspace-mcp');
    expect(cards.flow.name).toBe('io.flowgate/flow-mcp');
  });

  it('the workspace card has the scanners card remote; the flow card the per-flow template', () => {
    expect(cards.workspace.remotes).toEqual(scanners.remotes);
    expect(cards.flow.remotes[0]?.url).toBe(
      'https://flowgate.test/api/workspaces/{workspace_id}/flows/{flow_slug}/mcp',
    );
    expect(cards.flow.remotes[0]?.headers).toEqual(scanners.remotes[0]?.headers);
  });
});

describe('server icon', () => {
  it('is the plain SVG as a base64 data URI: no script, no external reference', () => {
    const [icon] = serverIcons();
    expect(serverIcons()).toHaveLength(1);
    expect(icon?.mimeType).toBe('image/svg+xml');
    const svg = atob(icon?.src.replace('data:image/svg+xml;base64,', '') ?? '');
    expect(svg).toBe(SERVER_ICON_SVG);
    expect(svg).not.toMatch(/<script|on[a-z]+=|href|url\(/i);
    expect(icon?.src.length).toBeLessThan(600);
    expect(buildServerCard({ version: '1' }).icons).toEqual(serverIcons());
  });
});
