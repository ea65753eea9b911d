// TEMPORARY: the issue-27 contract's usage types until usage-meter lands in @flowgate/workspace; removed at merge.
import type { Operator, Workspace } from '@flowgate/workspace';

export const USAGE_GROUPS = ['tool', 'method', 'key', 'client', 'flow', 'outcome'] as const;
export type UsageGroupBy = (typeof USAGE_GROUPS)[number];
export type UsageGranularity = 'hour' | 'day';
export interface UsageQuery {
  from: Date;
  to: Date;
  granularity: UsageGranularity;
  groupBy: UsageGroupBy;
}
export interface UsagePoint {
  time: string;
  group: string;
  count: number;
  errors: number;
  p50Ms: number | null;
  p95Ms: number | null;
  runs?: { started: number; completed: number; failed: number; cancelled: number };
  steps?: number;
  httpCalls?: number;
  llmTokens?: number;
}
export interface UsageSeries {
  from: string;
  to: string;
  granularity: UsageGranularity;
  groupBy: UsageGroupBy;
  points: UsagePoint[];
  totals: { calls: number; errors: number; runs: number; llmTokens: number };
}
export interface WorkspaceUsageRow {
  workspaceId: string;
  calls: number;
  errors: number;
  runs: number;
  llmTokens: number;
  daily: number[];
}
export const usageOf = (ws: Workspace) =>
  (ws as unknown as { usage: { series(q: UsageQuery): Promise<UsageSeries> } }).usage;
export const usageByWorkspace = (op: Operator, q: Omit<UsageQuery, 'groupBy'>) =>
  (
    op as unknown as { usageByWorkspace(q: Omit<UsageQuery, 'groupBy'>): Promise<WorkspaceUsageRow[]> }
  ).usageByWorkspace(q);
