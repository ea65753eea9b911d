/** Capability bundles an operator grants for common jobs; get_workspace_context reports which a caller holds. */
import type { Capability } from '@flowgate/auth';

export const CAPABILITY_GROUPS: readonly {
  id: string;
  title: string;
  capabilities: readonly Capability[];
  use: string;
}[] = Object.freeze([
  {
    id: 'read_search',
    title: 'Read/search',
    capabilities: ['flows.read', 'resources.read', 'installations.read'],
    use: 'Discover flows, installed flows, MCP interfaces, docs and resource metadata.',
  },
  {
    id: 'setup_reference',
    title: 'Setup/reference',
    capabilities: ['flows.read', 'resources.read', 'installations.read', 'connections.read', 'steps.read'],
    use: 'Inspect connections, check their health and fetch focused step docs.',
  },
  {
    id: 'run_debug',
    title: 'Run/debug',
    capabilities: ['flows.read', 'resources.read', 'installations.read', 'flows.run', 'runs.read'],
    use: 'Start flow MCP interfaces, follow run status and events, inspect run steps.',
  },
  {
    id: 'draft_authoring',
    title: 'Draft authoring',
    capabilities: ['flows.read', 'resources.read', 'installations.read', 'flows.manage'],
    use: 'Validate definitions and create or update drafts.',
  },
  {
    id: 'release',
    title: 'Release',
    capabilities: ['flows.read', 'resources.read', 'installations.read', 'flows.manage'],
    use: 'Release an approved flow version to the workspace live target.',
  },
  {
    id: 'feedback',
    title: 'Feedback',
    capabilities: ['feedback.send'],
    use: 'Report docs, setup, runtime or flow-interface friction.',
  },
]);
