import { z } from 'zod';

export const CAPABILITIES = [
  'flows.read',
  'flows.run',
  'flows.manage',
  'runs.read',
  'resources.read',
  'installations.read',
  'connections.read',
  'steps.read',
  'feedback.send',
  'workspace.full',
] as const;

export type Capability = (typeof CAPABILITIES)[number];
export const capabilitySchema = z.enum(CAPABILITIES);

/** Every capability `workspace.full` stands for. It never includes account or key management. */
export const GRANTED_BY_FULL: readonly Capability[] = CAPABILITIES.filter((c) => c !== 'workspace.full');

export type Role = 'admin' | 'editor' | 'viewer';
export const roleSchema = z.enum(['admin', 'editor', 'viewer']);

const VIEWER: Capability[] = [
  'flows.read',
  'runs.read',
  'resources.read',
  'installations.read',
  'connections.read',
  'steps.read',
  'feedback.send',
];
const EDITOR: Capability[] = [...VIEWER, 'flows.run', 'flows.manage'];

export const ROLE_CAPABILITIES: Record<Role, readonly Capability[]> = {
  viewer: VIEWER,
  editor: EDITOR,
  admin: EDITOR,
};

/** Expands `workspace.full` and removes duplicates; the result is what gates check against. */
export function effectiveCapabilities(granted: Iterable<Capability>): ReadonlySet<Capability> {
  const out = new Set<Capability>();
  for (const c of granted) {
    if (c === 'workspace.full') for (const g of GRANTED_BY_FULL) out.add(g);
    else out.add(c);
  }
  return out;
}
