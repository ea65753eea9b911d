/** prompts/list and prompts/get (the prompts themselves: prompts.ts). Hidden prompts answer like unknown ones. */
import { auditPreview, auditText } from '../audit-preview.js';
import { hiddenCatalogTools, iconsForTools } from '../catalog.js';
import { guideMarkdown, guideProse } from '../guidance.js';
import { iconsDefinedAt } from '../icons.js';
import { PROMPT_ARGUMENT_MAX_CHARS, promptDescriptor, visiblePrompts } from '../prompts.js';
import { clip, invalidParams, isJsonObject } from '../protocol.js';
import { type AuditedCall, audited, type CallSubject } from './audited.js';
import { listPage } from './pages.js';
import { boundedRunId } from './resources.js';
import type { MethodHandler, Params, Scope } from './scope.js';

function getSubject(params: Params): CallSubject {
  const name = params.name;
  if (typeof name !== 'string' || name.length === 0) throw invalidParams('params.name must be a prompt name');
  const rawArgs = params.arguments ?? {};
  return {
    kind: 'prompts/get',
    action: auditText(name, 128),
    arguments: () => auditPreview(rawArgs),
    runId: boundedRunId((rawArgs as Record<string, unknown>).run_id),
  };
}

function getPrompt(params: Params, scope: Scope, call: AuditedCall): unknown {
  const name = params.name as string;
  const rawArgs = params.arguments ?? {};
  const refuse = (message: string, data?: unknown): never => {
    throw call.fail('invalid_params', invalidParams(message, data));
  };
  const prompt = visiblePrompts(scope.request).find((p) => p.name === name);
  if (!prompt) return refuse(`Unknown prompt: ${clip(name, 128)}`);
  if (!isJsonObject(rawArgs)) return refuse('params.arguments must be an object of strings');
  const valid = prompt.arguments.map((a) => a.name);
  const args: Record<string, string> = {};
  for (const [key, value] of Object.entries(rawArgs)) {
    if (!valid.includes(key))
      return refuse(`Unknown argument ${JSON.stringify(clip(key, 64))} for prompt ${prompt.name}`, { valid });
    if (typeof value !== 'string' || value.length > PROMPT_ARGUMENT_MAX_CHARS)
      return refuse(`Argument ${key} must be a string of at most ${PROMPT_ARGUMENT_MAX_CHARS} characters`);
    if (value.trim()) args[key] = value.trim();
  }
  const missing = prompt.arguments.filter((a) => a.required && args[a.name] === undefined).map((a) => a.name);
  if (missing.length)
    return refuse(`Missing required argument(s) for prompt ${prompt.name}: ${missing.join(', ')}`, {
      missing,
    });
  // A step naming a tool the caller cannot see (e.g. lacking its capability) is left out, not sent as a dead end.
  const hidden = hiddenCatalogTools(scope.request);
  return {
    description: guideProse(prompt.description, hidden),
    messages: [{ role: 'user', content: { type: 'text', text: guideMarkdown(prompt.render(args), hidden) } }],
  };
}

export const PROMPT_METHODS: ReadonlyArray<readonly [string, MethodHandler]> = [
  [
    'prompts/list',
    (p: Params, s: Scope) => {
      const hidden = hiddenCatalogTools(s.request);
      const icons = iconsDefinedAt(s.protocolVersion);
      // Catalog order (prompts.ts), filtered: the same list for every request with the same key.
      const prompts = visiblePrompts(s.request).map((prompt) => {
        const d = promptDescriptor(prompt, hidden);
        return icons ? { ...d, icons: iconsForTools(prompt.usesTools) } : d;
      });
      return listPage('prompts', prompts, s, 'prompts/list', p.cursor);
    },
  ],
  ['prompts/get', audited(getSubject, getPrompt)],
];
