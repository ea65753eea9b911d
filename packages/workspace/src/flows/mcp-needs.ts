/**
 * Which remote tools a flow body names, per `mcp-server` slot: the literal `:tool` of `(flow/step :mcp …)` steps and
 * the `:allow` names of `{:mcp :slot …}` entries in the `:tools` of `(flow/step :llm …)` steps. Read from the EDN tree
 * itself and tolerant of anything it does not understand (a computed tool name, an unknown shape): validation is the
 * validator's job, this only collects what can be compared with a server's tool list before a run.
 */
import { type EdnNode, mapGet } from '@flowgate/flows';

/** Slot → the tool names the flow names on it (possibly none, when every name is computed). */
export type McpToolNeeds = Map<string, Set<string>>;

function keywordName(node: EdnNode | undefined): string | null {
  return node?.kind === 'keyword' ? node.name : null;
}

function need(needs: McpToolNeeds, slot: string): Set<string> {
  let names = needs.get(slot);
  if (!names) {
    names = new Set();
    needs.set(slot, names);
  }
  return names;
}

/** `{:mcp :slot :allow ["a" {:name "b" …}]}` entries of an `:llm` step's `:tools`. */
function llmToolEntries(needs: McpToolNeeds, tools: EdnNode | undefined): void {
  if (tools?.kind !== 'vector' && tools?.kind !== 'list') return;
  for (const entry of tools.items) {
    if (entry.kind !== 'map') continue;
    const slot = keywordName(mapGet(entry, 'mcp'));
    if (slot === null) continue;
    const names = need(needs, slot);
    const allow = mapGet(entry, 'allow');
    if (allow?.kind !== 'vector' && allow?.kind !== 'list') continue;
    for (const item of allow.items) {
      if (item.kind === 'string') names.add(item.value);
      else if (item.kind === 'map') {
        const name = mapGet(item, 'name');
        if (name?.kind === 'string') names.add(name.value);
      }
    }
  }
}

function step(needs: McpToolNeeds, items: readonly EdnNode[]): void {
  const [head, type, , config] = items;
  if (head?.kind !== 'symbol' || head.name !== 'flow/step' || config?.kind !== 'map') return;
  const stepType = keywordName(type);
  if (stepType === 'mcp') {
    const slot = keywordName(mapGet(config, 'connection'));
    if (slot === null) return;
    const names = need(needs, slot);
    const tool = mapGet(config, 'tool');
    if (tool?.kind === 'string') names.add(tool.value);
  } else if (stepType === 'llm') {
    llmToolEntries(needs, mapGet(config, 'tools'));
  }
}

/** Every MCP tool a body names, by slot; an empty map when it uses none. */
export function mcpToolNeeds(body: EdnNode): McpToolNeeds {
  const needs: McpToolNeeds = new Map();
  // An explicit stack: a hostile body's nesting cannot exhaust the call stack.
  const pending: EdnNode[] = [body];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    switch (node.kind) {
      case 'list':
        step(needs, node.items);
        pending.push(...node.items);
        break;
      case 'vector':
      case 'set':
        pending.push(...node.items);
        break;
      case 'map':
        for (const entry of node.entries) pending.push(entry.key, entry.value);
        break;
      default:
        break;
    }
  }
  return needs;
}
