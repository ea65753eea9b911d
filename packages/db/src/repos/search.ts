import { type SQL, sql } from 'drizzle-orm';
import type { Database } from '../client.js';

/**
 * Search over a workspace's flows and flow MCP interfaces, plus the public flows it installed.
 *
 * Ranking: exact name (tool name, or flow slug) first, then names starting with the query, then entries whose
 * search text contains every query term. Within a rank, entries are in byte order of the lowercased name (the
 * `"C"` collation, so the order is the same on every database), then a tiebreak that makes the order total, so a
 * position (`after`) resumes a page exactly.
 *
 * Cost is bounded whatever the term: the substring rank first walks the name index in order for at most
 * `WALK_ROWS` rows (a common term fills a page within them); when that walk ends without a full page, the term is
 * rare and a trigram GIN index (which also holds the workspace id, so other workspaces' rows are never visited)
 * returns the few matches, sorted afterwards. Measured in bench/flow-search.ts.
 */

export const SEARCH_LIMIT_MAX = 50;
export const SEARCH_QUERY_MAX_LENGTH = 200;
export const SEARCH_MAX_TERMS = 8;
const WALK_ROWS = 1000;

type Rank = 0 | 1 | 2;

/** Resume point of `searchFlowTools`; the MCP layer seals it into an opaque cursor. */
export interface ToolSearchPosition {
  rank: Rank;
  /** Lowercased tool name. */
  key: string;
  /** 0: the workspace's own flow; 1: an installation. */
  group: 0 | 1;
  /** Flow slug (group 0) or installation id (group 1). */
  id: string;
  /** `draft` or `live` (group 0); empty for installations. */
  source: string;
  toolName: string;
}

/** Resume point of `searchFlows`. */
export interface FlowSearchPosition {
  rank: Rank;
  /** Flow slug. */
  key: string;
  group: 0 | 1;
  /** Flow slug (group 0) or installation id (group 1). */
  id: string;
}

export interface FlowToolHit {
  origin: 'workspace' | 'installation';
  flowId: string;
  flowSlug: string;
  toolName: string;
  invocation: string;
  /** `live` or `draft` for the workspace's own flows; `live` for installations (the version they run). */
  source: 'live' | 'draft';
  /** The version the row describes; null for a draft. */
  version: number | null;
  /** Flow-authored, untrusted (spec 7.5): the caller decides whether a model may see it. */
  title: string | null;
  description: string | null;
  flowName: string | null;
  /** The opt-in that applies: the flow's (own flows) or the installation's. */
  trustMetadata: boolean;
  installationId: string | null;
  /** Installations only: whether it may run. */
  enabled: boolean | null;
  sourceWorkspaceId: string | null;
  rank: Rank;
}

export interface FlowHit {
  origin: 'workspace' | 'installation';
  flowId: string;
  flowSlug: string;
  /** Flow-authored, untrusted. Own flows: the draft's; installations: the version they run. */
  name: string | null;
  description: string | null;
  tags: string[];
  /** Own flows only. */
  liveVersion: number | null;
  latestVersion: number | null;
  hasDraft: boolean;
  isPublic: boolean;
  trustMetadata: boolean;
  installationId: string | null;
  enabled: boolean | null;
  sourceWorkspaceId: string | null;
  /** Installations: the version they run. */
  version: number | null;
  rank: Rank;
}

export interface SearchPage<T, P> {
  items: T[];
  /** Position after the last item, or null when there is nothing more. */
  next: P | null;
}

export interface NormalisedQuery {
  /** Lowercased, whitespace collapsed; empty means browse. */
  text: string;
  terms: string[];
}

export function normaliseQuery(query: string | undefined): NormalisedQuery {
  const text = (query ?? '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, SEARCH_QUERY_MAX_LENGTH)
    .trim();
  const terms = [...new Set(text.split(' ').filter((t) => t.length > 0))].slice(0, SEARCH_MAX_TERMS);
  return { text, terms };
}

const clampLimit = (limit: number) => Math.min(Math.max(Math.trunc(limit) || 1, 1), SEARCH_LIMIT_MAX);

function isRank(v: unknown): v is Rank {
  return v === 0 || v === 1 || v === 2;
}
const isShortString = (v: unknown, max = 300): v is string => typeof v === 'string' && v.length <= max;

/** Shape check for a position read back from a cursor (the cursor is sealed; this guards against old formats). */
export function isToolSearchPosition(v: unknown): v is ToolSearchPosition {
  if (typeof v !== 'object' || v === null) return false;
  const p = v as Record<string, unknown>;
  return (
    isRank(p.rank) &&
    (p.group === 0 || p.group === 1) &&
    isShortString(p.key) &&
    isShortString(p.id) &&
    (p.source === 'live' || p.source === 'draft' || p.source === '') &&
    isShortString(p.toolName)
  );
}

export function isFlowSearchPosition(v: unknown): v is FlowSearchPosition {
  if (typeof v !== 'object' || v === null) return false;
  const p = v as Record<string, unknown>;
  return isRank(p.rank) && (p.group === 0 || p.group === 1) && isShortString(p.key) && isShortString(p.id);
}

/** Rows of `db.execute`, whichever driver answered. */
function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

const likeContains = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
const joinAnd = (parts: SQL[]) => sql.join(parts, sql` and `);
/** Byte-order comparison of the sort keys, the same as the database's `"C"` collation for the ASCII keys used. */
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

// ---- flow tools -----------------------------------------------------------------------------------------------

interface OwnToolRow {
  flowId: string;
  flowSlug: string;
  source: 'live' | 'draft';
  toolName: string;
  invocation: string;
  version: number | null;
  title: string | null;
  description: string | null;
  flowName: string | null;
}

interface InstalledToolRow extends Omit<OwnToolRow, 'source'> {
  installationId: string;
  enabled: boolean;
  trustMetadata: boolean;
  sourceWorkspaceId: string;
}

type ToolCandidate = {
  rank: Rank;
  key: string;
  group: 0 | 1;
  id: string;
  source: string;
  row: OwnToolRow | InstalledToolRow;
};

const TOOL_KEY = sql.raw(`(lower(t.tool_name) collate "C")`);
const TOOL_ORDER = sql.raw(
  `(lower(t.tool_name) collate "C"), (t.flow_slug collate "C"), t.source, (t.tool_name collate "C")`,
);
// Same order through an expression no index provides, so the planner sorts the (few) trigram matches instead of
// walking the name index.
const TOOL_ORDER_SORTED = sql.raw(
  `((lower(t.tool_name) || '') collate "C"), (t.flow_slug collate "C"), t.source, (t.tool_name collate "C")`,
);
const OWN_TOOL_COLUMNS = sql.raw(
  `t.flow_id as "flowId", t.flow_slug as "flowSlug", t.source, t.tool_name as "toolName", t.invocation, t.version, t.title, t.description, t.flow_name as "flowName"`,
);

export interface ToolSearchOptions {
  /** Free text: every term must occur in the interface's search text. */
  query?: string | undefined;
  /** Exact (case-sensitive) tool name. */
  toolName?: string | undefined;
  limit: number;
  after?: ToolSearchPosition | undefined;
  /** Also the `draft` interfaces of the workspace's own flows (callers check `flows.manage`). */
  includeDraft?: boolean | undefined;
  /** Include installations (default true; callers without `installations.read` pass false). */
  includeInstallations?: boolean | undefined;
}

/** Callable flow MCP interfaces of a workspace: its own flows' and its installations' (enabled or not). */
export async function searchFlowTools(
  db: Database,
  workspaceId: string,
  options: ToolSearchOptions,
): Promise<SearchPage<FlowToolHit, ToolSearchPosition>> {
  const limit = clampLimit(options.limit);
  const want = limit + 1;
  const q = normaliseQuery(options.query);
  const sources = options.includeDraft ? sql.raw(`('live','draft')`) : sql.raw(`('live')`);
  const ownBase = sql`t.workspace_id = ${workspaceId} and t.source in ${sources}`;
  const after = options.after;
  const withInstallations = options.includeInstallations !== false;

  const found: ToolCandidate[] = [];
  // Tiers in rank order; each returns its candidates in final order.
  type Tier = {
    ranks: Rank[];
    own: (n: number, afterCond: SQL | null) => Promise<OwnToolRow[]>;
    installed: SQL | null;
  };
  const tiers: Tier[] = [];
  const exactName = options.toolName;
  if (exactName !== undefined) {
    const termConds = q.terms.map((term) => sql`t.search_text like ${likeContains(term)} escape '\\'`);
    const cond = joinAnd([sql`t.tool_name = ${exactName}`, ...termConds]);
    tiers.push({
      ranks: [0],
      own: (n, a) => ownTools(db, sql`${ownBase} and ${cond}${a ? sql` and ${a}` : sql``}`, TOOL_ORDER, n),
      installed: cond,
    });
  } else if (q.terms.length === 0) {
    tiers.push({
      ranks: [0],
      own: (n, a) => ownTools(db, a ? sql`${ownBase} and ${a}` : ownBase, TOOL_ORDER, n),
      installed: sql`true`,
    });
  } else {
    if (q.terms.length === 1) {
      // Exact and prefix matches of the tool name are one range of the name index (the exact one sorts first).
      const prefix = sql`${TOOL_KEY} >= ${q.text} and ${TOOL_KEY} < ${`${q.text}\u007f`} and starts_with(lower(t.tool_name), ${q.text})`;
      tiers.push({
        ranks: [0, 1],
        own: (n, a) =>
          ownTools(db, sql`${ownBase} and ${prefix}${a ? sql` and ${a}` : sql``}`, TOOL_ORDER, n),
        installed: sql`starts_with(lower(t.tool_name), ${q.text})`,
      });
    }
    const notPrefix = q.terms.length === 1 ? sql`not starts_with(lower(t.tool_name), ${q.text})` : null;
    const walkConds = q.terms.map((term) => sql`strpos(t.search_text, ${term}) > 0`);
    const indexConds = q.terms.map((term) => sql`t.search_text like ${likeContains(term)} escape '\\'`);
    if (notPrefix) {
      walkConds.push(notPrefix);
      indexConds.push(notPrefix);
    }
    tiers.push({
      ranks: [2],
      own: (n, a) =>
        ownToolsAdaptive(
          db,
          a ? sql`${ownBase} and ${a}` : ownBase,
          joinAnd(walkConds),
          joinAnd(indexConds),
          n,
        ),
      installed: joinAnd(indexConds),
    });
  }

  for (const tier of tiers) {
    if (found.length >= want) break;
    const tierRank = tier.ranks[tier.ranks.length - 1] as Rank;
    if (after && after.rank > tierRank) continue;
    const resume = after && tier.ranks.includes(after.rank) ? after : undefined;
    const n = want - found.length;
    const ownAfter = resume
      ? resume.group === 0
        ? sql`(${TOOL_KEY}, (t.flow_slug collate "C"), t.source, (t.tool_name collate "C")) > (${resume.key}, ${resume.id}, ${resume.source}, ${resume.toolName})`
        : sql`${TOOL_KEY} > ${resume.key}`
      : null;
    const [own, installed] = await Promise.all([
      tier.own(n, ownAfter),
      withInstallations && tier.installed
        ? installedTools(db, workspaceId, tier.installed, resume, n)
        : Promise.resolve([] as InstalledToolRow[]),
    ]);
    const rankOf = (toolName: string): Rank =>
      tier.ranks.length === 1 ? (tier.ranks[0] as Rank) : toolName.toLowerCase() === q.text ? 0 : 1;
    const candidates: ToolCandidate[] = [
      ...own.map((row) => ({
        rank: rankOf(row.toolName),
        key: row.toolName.toLowerCase(),
        group: 0 as const,
        id: row.flowSlug,
        source: row.source,
        row,
      })),
      ...installed.map((row) => ({
        rank: rankOf(row.toolName),
        key: row.toolName.toLowerCase(),
        group: 1 as const,
        id: row.installationId,
        source: '',
        row,
      })),
    ];
    candidates.sort(
      (a, b) =>
        a.rank - b.rank ||
        cmp(a.key, b.key) ||
        a.group - b.group ||
        cmp(a.id, b.id) ||
        cmp(a.source, b.source) ||
        cmp(a.row.toolName, b.row.toolName),
    );
    found.push(...candidates.slice(0, n));
  }

  const page = found.slice(0, limit);
  const trust = await flowTrust(
    db,
    workspaceId,
    page.filter((c) => c.group === 0).map((c) => c.row.flowId),
  );
  const items = page.map((c): FlowToolHit => {
    const base = {
      flowId: c.row.flowId,
      flowSlug: c.row.flowSlug,
      toolName: c.row.toolName,
      invocation: c.row.invocation,
      version: c.row.version,
      title: c.row.title,
      description: c.row.description,
      flowName: c.row.flowName,
      rank: c.rank,
    };
    if ('installationId' in c.row) {
      return {
        ...base,
        origin: 'installation',
        source: 'live',
        trustMetadata: c.row.trustMetadata,
        installationId: c.row.installationId,
        enabled: c.row.enabled,
        sourceWorkspaceId: c.row.sourceWorkspaceId,
      };
    }
    return {
      ...base,
      origin: 'workspace',
      source: c.row.source,
      trustMetadata: trust.get(c.row.flowId) ?? false,
      installationId: null,
      enabled: null,
      sourceWorkspaceId: null,
    };
  });
  const last = page.at(-1);
  const next =
    found.length > limit && last
      ? {
          rank: last.rank,
          key: last.key,
          group: last.group,
          id: last.id,
          source: last.source,
          toolName: last.row.toolName,
        }
      : null;
  return { items, next };
}

async function ownTools(db: Database, where: SQL, order: SQL, n: number): Promise<OwnToolRow[]> {
  return rowsOf<OwnToolRow>(
    await db.execute(
      sql`select ${OWN_TOOL_COLUMNS} from flow_tools t where ${where} order by ${order} limit ${n}`,
    ),
  );
}

/** The bounded walk, then (only for rare terms in a large workspace) the trigram index. */
async function ownToolsAdaptive(
  db: Database,
  where: SQL,
  walkFilter: SQL,
  indexFilter: SQL,
  n: number,
): Promise<OwnToolRow[]> {
  const walked = rowsOf<OwnToolRow & { scanned: number }>(
    await db.execute(sql`
      with w as materialized (
        select t.flow_id, t.flow_slug, t.source, t.tool_name, t.invocation, t.version, t.title, t.description,
               t.flow_name, t.search_text
        from flow_tools t where ${where} order by ${TOOL_ORDER} limit ${WALK_ROWS}
      )
      select c.scanned, m.* from (select count(*)::int as scanned from w) c
      left join lateral (
        select ${OWN_TOOL_COLUMNS} from w t where ${walkFilter} order by ${TOOL_ORDER} limit ${n}
      ) m on true`),
  );
  const scanned = walked[0]?.scanned ?? 0;
  const hits = walked.filter((r) => r.toolName !== null).map(({ scanned: _s, ...r }) => r);
  if (hits.length >= n || scanned < WALK_ROWS) return hits;
  return ownTools(db, sql`${where} and ${indexFilter}`, TOOL_ORDER_SORTED, n);
}

/**
 * Tools of the workspace's installations, from the version each one runs; the source must still be public and
 * released and that version released public. Installations per workspace are bounded, so this stays small.
 */
async function installedTools(
  db: Database,
  workspaceId: string,
  filter: SQL,
  resume: ToolSearchPosition | undefined,
  n: number,
): Promise<InstalledToolRow[]> {
  const afterCond = resume
    ? resume.group === 0
      ? sql` and ${TOOL_KEY} >= ${resume.key}`
      : sql` and (${TOOL_KEY}, (i.id collate "C"), (t.tool_name collate "C")) > (${resume.key}, ${resume.id}, ${resume.toolName})`
    : sql``;
  return rowsOf<InstalledToolRow>(
    await db.execute(sql`
      select t.flow_id as "flowId", f.slug as "flowSlug", t.tool_name as "toolName", t.invocation, t.version, t.title,
             t.description, t.flow_name as "flowName", i.id as "installationId", i.enabled,
             i.trust_metadata as "trustMetadata", i.source_workspace_id as "sourceWorkspaceId"
      from installations i
      join flows f on f.id = i.source_flow_id and f.workspace_id = i.source_workspace_id
                   and f.is_public and f.live_version is not null
      join flow_versions v on v.flow_id = f.id and v.workspace_id = f.workspace_id and v.is_public
                   and v.version = (case when i.version_policy = 'pinned' then i.pinned_version else f.live_version end)
      join flow_version_tools t on t.flow_id = v.flow_id and t.version = v.version and t.workspace_id = v.workspace_id
      where i.workspace_id = ${workspaceId} and ${filter}${afterCond}
      order by ${TOOL_KEY}, (i.id collate "C"), (t.tool_name collate "C")
      limit ${n}`),
  );
}

async function flowTrust(
  db: Database,
  workspaceId: string,
  flowIds: string[],
): Promise<Map<string, boolean>> {
  const ids = [...new Set(flowIds)];
  if (ids.length === 0) return new Map();
  const rows = rowsOf<{ id: string; trust: boolean }>(
    await db.execute(
      sql`select id, trust_metadata as trust from flows where workspace_id = ${workspaceId} and id in (${sql.join(
        ids.map((id) => sql`${id}`),
        sql`, `,
      )})`,
    ),
  );
  return new Map(rows.map((r) => [r.id, r.trust]));
}

// ---- flows ----------------------------------------------------------------------------------------------------

interface OwnFlowRow {
  flowId: string;
  flowSlug: string;
  name: string | null;
  description: string | null;
  tags: string[];
  liveVersion: number | null;
  latestVersion: number | null;
  hasDraft: boolean;
  isPublic: boolean;
  trustMetadata: boolean;
}

interface InstalledFlowRow {
  flowId: string;
  flowSlug: string;
  name: string | null;
  description: string | null;
  tags: string[] | null;
  version: number;
  installationId: string;
  enabled: boolean;
  trustMetadata: boolean;
  sourceWorkspaceId: string;
}

const FLOW_KEY = sql.raw(`(f.slug collate "C")`);
const FLOW_ORDER_SORTED = sql.raw(`((f.slug || '') collate "C")`);
const OWN_FLOW_COLUMNS = sql.raw(
  `f.id as "flowId", f.slug as "flowSlug", f.name, f.description, f.tags, f.live_version as "liveVersion", f.latest_version as "latestVersion", f.has_draft as "hasDraft", f.is_public as "isPublic", f.trust_metadata as "trustMetadata"`,
);
const FLOW_BASE_COLUMNS = sql.raw(
  `f.id, f.slug, f.name, f.description, f.tags, f.live_version, f.latest_version, (f.draft_literal is not null) as has_draft, f.is_public, f.trust_metadata, f.search_text`,
);

/** Match conditions of one rank over a relation aliased `alias` with `slug` and `search_text` columns. */
function flowTierConds(alias: string, q: NormalisedQuery, rank: Rank, indexed: boolean): SQL {
  const slug = sql.raw(`lower(${alias}.slug)`);
  const text = sql.raw(`${alias}.search_text`);
  // The slug is part of the search text, so the trigram condition narrows the slug ranks too when indexed.
  const viaIndex = indexed ? sql` and ${text} like ${likeContains(q.text)} escape '\\'` : sql``;
  if (rank === 0) return sql`${slug} = ${q.text}${viaIndex}`;
  if (rank === 1) return sql`starts_with(${slug}, ${q.text}) and ${slug} <> ${q.text}${viaIndex}`;
  const conds = q.terms.map((term) =>
    indexed ? sql`${text} like ${likeContains(term)} escape '\\'` : sql`strpos(${text}, ${term}) > 0`,
  );
  if (q.terms.length === 1) conds.push(sql`not starts_with(${slug}, ${q.text})`);
  return joinAnd(conds);
}

/** The workspace's flows and the flows it installed, ranked by slug match, then text match. */
export async function searchFlows(
  db: Database,
  workspaceId: string,
  options: {
    query?: string | undefined;
    limit: number;
    after?: FlowSearchPosition | undefined;
    includeInstallations?: boolean | undefined;
  },
): Promise<SearchPage<FlowHit, FlowSearchPosition>> {
  const limit = clampLimit(options.limit);
  const want = limit + 1;
  const q = normaliseQuery(options.query);
  const ownBase = sql`f.workspace_id = ${workspaceId}`;
  const after = options.after;
  const withInstallations = options.includeInstallations !== false;
  // Browse is one rank; one word can match the slug exactly, as a prefix, or in the text; several words only in the text.
  const ranks: Rank[] = q.terms.length === 0 ? [0] : q.terms.length === 1 ? [0, 1, 2] : [2];
  const conds = (alias: string, rank: Rank, indexed: boolean) =>
    q.terms.length === 0 ? sql`true` : flowTierConds(alias, q, rank, indexed);

  type Candidate = { rank: Rank; key: string; group: 0 | 1; id: string; row: OwnFlowRow | InstalledFlowRow };
  const found: Candidate[] = [];
  for (const rank of ranks) {
    if (found.length >= want) break;
    if (after && after.rank > rank) continue;
    const resume = after && after.rank === rank ? after : undefined;
    const n = want - found.length;
    // Slugs are unique per workspace, so the slug alone orders own flows; installations of a slug sort after it.
    const where = resume ? sql`${ownBase} and ${FLOW_KEY} > ${resume.key}` : ownBase;
    const [own, installed] = await Promise.all([
      ownFlowsAdaptive(db, where, conds('f', rank, false), conds('f', rank, true), n),
      withInstallations
        ? installedFlows(db, workspaceId, conds('s', rank, false), resume, n)
        : Promise.resolve([] as InstalledFlowRow[]),
    ]);
    const candidates: Candidate[] = [
      ...own.map((row) => ({ rank, key: row.flowSlug, group: 0 as const, id: row.flowSlug, row })),
      ...installed.map((row) => ({
        rank,
        key: row.flowSlug,
        group: 1 as const,
        id: row.installationId,
        row,
      })),
    ];
    candidates.sort((a, b) => cmp(a.key, b.key) || a.group - b.group || cmp(a.id, b.id));
    found.push(...candidates.slice(0, n));
  }

  const page = found.slice(0, limit);
  const items = page.map((c): FlowHit => {
    if ('installationId' in c.row) {
      const r = c.row;
      return {
        origin: 'installation',
        flowId: r.flowId,
        flowSlug: r.flowSlug,
        name: r.name,
        description: r.description,
        tags: Array.isArray(r.tags) ? r.tags.filter((t): t is string => typeof t === 'string') : [],
        liveVersion: null,
        latestVersion: null,
        hasDraft: false,
        isPublic: true,
        trustMetadata: r.trustMetadata,
        installationId: r.installationId,
        enabled: r.enabled,
        sourceWorkspaceId: r.sourceWorkspaceId,
        version: r.version,
        rank: c.rank,
      };
    }
    return {
      ...c.row,
      origin: 'workspace',
      installationId: null,
      enabled: null,
      sourceWorkspaceId: null,
      version: null,
      rank: c.rank,
    };
  });
  const last = page.at(-1);
  const next =
    found.length > limit && last ? { rank: last.rank, key: last.key, group: last.group, id: last.id } : null;
  return { items, next };
}

async function ownFlowsAdaptive(
  db: Database,
  where: SQL,
  walkFilter: SQL,
  indexFilter: SQL,
  n: number,
): Promise<OwnFlowRow[]> {
  const walked = rowsOf<OwnFlowRow & { scanned: number }>(
    await db.execute(sql`
      with w as materialized (
        select ${FLOW_BASE_COLUMNS} from flows f where ${where} order by ${FLOW_KEY} limit ${WALK_ROWS}
      )
      select c.scanned, m.* from (select count(*)::int as scanned from w) c
      left join lateral (
        select ${OWN_FLOW_COLUMNS} from w f where ${walkFilter} order by ${FLOW_KEY} limit ${n}
      ) m on true`),
  );
  const scanned = walked[0]?.scanned ?? 0;
  const hits = walked.filter((r) => r.flowSlug !== null).map(({ scanned: _s, ...r }) => r);
  if (hits.length >= n || scanned < WALK_ROWS) return hits;
  return rowsOf<OwnFlowRow>(
    await db.execute(sql`
      select ${OWN_FLOW_COLUMNS} from (select ${FLOW_BASE_COLUMNS} from flows f where ${where} and ${indexFilter}) f
      order by ${FLOW_ORDER_SORTED} limit ${n}`),
  );
}

async function installedFlows(
  db: Database,
  workspaceId: string,
  filter: SQL,
  resume: FlowSearchPosition | undefined,
  n: number,
): Promise<InstalledFlowRow[]> {
  const afterCond = resume
    ? resume.group === 0
      ? sql` and (s.slug collate "C") >= ${resume.key}`
      : sql` and ((s.slug collate "C"), (s.installation_id collate "C")) > (${resume.key}, ${resume.id})`
    : sql``;
  return rowsOf<InstalledFlowRow>(
    await db.execute(sql`
      select s.flow_id as "flowId", s.slug as "flowSlug", s.name, s.description, s.tags, s.version,
             s.installation_id as "installationId", s.enabled, s.trust_metadata as "trustMetadata",
             s.source_workspace_id as "sourceWorkspaceId"
      from (
        select f.id as flow_id, f.slug, v.model->>'name' as name, v.model->>'description' as description,
               v.model->'tags' as tags, v.version, i.id as installation_id, i.enabled, i.trust_metadata,
               i.source_workspace_id,
               lower(concat_ws(' ', f.slug, v.model->>'name', v.model->>'description', v.model->>'tags')) as search_text
        from installations i
        join flows f on f.id = i.source_flow_id and f.workspace_id = i.source_workspace_id
                     and f.is_public and f.live_version is not null
        join flow_versions v on v.flow_id = f.id and v.workspace_id = f.workspace_id and v.is_public
                     and v.version = (case when i.version_policy = 'pinned' then i.pinned_version else f.live_version end)
        where i.workspace_id = ${workspaceId}
      ) s
      where ${filter}${afterCond}
      order by (s.slug collate "C"), (s.installation_id collate "C")
      limit ${n}`),
  );
}
