import { createHash } from 'node:crypto';
import type { FlowModel } from '@flowgate/flows';
import { type SQL, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Database } from '../client.js';
import { flowSearchText, toolRowsFromModel } from './flows.js';

/**
 * Search over a workspace's flows and flow MCP interfaces, plus the public flows it installed.
 *
 * Ranking: exact name (tool name, or flow slug) first, then names starting with the query, then entries whose
 * search text contains every query term. Within a rank, entries are in byte order of the lowercased name (the
 * `"C"` collation, so the order is the same on every database), then a tiebreak that makes the order total, so a
 * position (`after`) resumes a page exactly.
 *
 * Cost stays bounded whatever the term, with one statement per page whose branches are gated at run time: exact
 * and prefix matches are a range of the name index; for the text rank, a short lazy walk of the name index serves
 * common terms; when it leaves the page short, the trigram GIN index (which also holds the workspace id, so other
 * workspaces' rows are never read) returns up to `SEARCH_TUNING.indexMatchesMax` matches to sort; only a term with more matches
 * than that — common enough that a page is near — resumes the lazy walk. Installations are few: their state is one query, and what each one runs comes from an in-process cache keyed
 * by (flow, version), which cannot go stale because versions never change. Measured in bench/flow-search.ts.
 */

export const SEARCH_LIMIT_MAX = 50;
export const SEARCH_QUERY_MAX_LENGTH = 200;
export const SEARCH_MAX_TERMS = 8;
/**
 * Bounds of the text-rank strategy (see `rankedStatement`). `firstWalkRows`: rows of the name index the first lazy walk
 * may read (a common term fills a page well within them). `denseHits`: matches that walk must have found to take the
 * term as common and keep walking, rather than asking the trigram index. `indexMatchesMax`: trigram matches still
 * sorted whole; with more, the term is common enough to walk for. `secondWalkRows`: rows the second walk may read — more than
 * `indexMatchesMax` matches fill a page within `n × rows ÷ indexMatchesMax` rows, so this covers workspaces of well
 * over 100,000 interfaces, and beyond it a last sorted trigram branch keeps the answer exact. Tests shrink these to
 * reach every branch on small data.
 */
/** Characters of a long term given to the trigram index (the rest is checked on the row). */
const INDEX_TERM_CHARS = 12;

export const SEARCH_TUNING = { firstWalkRows: 200, denseHits: 3, indexMatchesMax: 600, secondWalkRows: 5000 };

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
  /** Lowercased flow slug. */
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
  // Control characters are whitespace here (and NUL could never reach a text column anyway).
  const text = (query ?? '')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters is the point.
    .replace(/[\u0000-\u001f\u007f]/g, ' ')
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

interface PgliteLike {
  exec(text: string): Promise<unknown>;
  query<T>(text: string): Promise<{ rows: T[] }>;
}

type PostgresParam = string | number | boolean | null;
interface PostgresTx {
  unsafe(text: string, params?: PostgresParam[], options?: { prepare?: boolean }): Promise<unknown[]>;
}
interface PostgresLike {
  begin<T>(fn: (tx: PostgresTx) => Promise<T>): Promise<T>;
}

/** A prepared statement on the pool, outside any transaction (for simple statements whose custom plan is cheap). */
function pgUnsafe(db: Database, text: string, params: PostgresParam[]): Promise<unknown[]> {
  const client = (db as unknown as { $client: PostgresTx }).$client;
  return client.unsafe(text, params, { prepare: true });
}

function postgresOf(db: Database): PostgresLike | undefined {
  const client = (db as unknown as { $client?: unknown }).$client;
  if (typeof client === 'function' && 'begin' in client && 'unsafe' in client)
    return client as unknown as PostgresLike;
  return undefined;
}

const dialect = new PgDialect();
const preparedByClient = new WeakMap<object, Set<string>>();

function pgliteOf(db: Database): PgliteLike | undefined {
  const client = (db as unknown as { $client?: unknown }).$client;
  if (
    client &&
    typeof client === 'object' &&
    'waitReady' in client &&
    'exec' in client &&
    'query' in client
  ) {
    return client as PgliteLike;
  }
  return undefined;
}

/** A value as an SQL literal (strings quoted by doubling quotes: standard_conforming_strings is on). */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return `'${String(value).replace(/'/g, "''")}'`;
}

/**
 * Runs a search statement with a generic plan: planning these multi-branch statements costs more than running them,
 * and their branches are gated at run time, so one plan serves every value. On Postgres the statement is prepared on
 * the pooled connection (postgres.js keeps it), in a transaction that asks for the generic plan; PGlite never caches
 * plans of unnamed statements, so there each statement shape is PREPAREd once per database and EXECUTEd.
 */
async function run<T>(
  db: Database,
  statement: SQL,
  options: { generic: boolean } = { generic: true },
): Promise<T[]> {
  const client = pgliteOf(db);
  if (!client) {
    const pg = postgresOf(db);
    if (!pg) return rowsOf<T>(await db.execute(statement));
    // A named (prepared) statement per shape on each pooled connection; the generic plan is cached with it.
    const { sql: text, params } = dialect.sqlToQuery(statement);
    if (!options.generic) return (await pgUnsafe(db, text, params as PostgresParam[])) as T[];
    return pg.begin(async (tx) => {
      const [, rows] = await Promise.all([
        tx.unsafe('set local plan_cache_mode = force_generic_plan'),
        tx.unsafe(text, params as PostgresParam[], { prepare: true }),
      ]);
      return rows as T[];
    });
  }
  let prepared = preparedByClient.get(client);
  if (!prepared) {
    prepared = new Set();
    preparedByClient.set(client, prepared);
    await client.exec('set plan_cache_mode = force_generic_plan');
  }
  const { sql: text, params } = dialect.sqlToQuery(statement);
  const name = `fg_search_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
  if (!prepared.has(name)) {
    await client.exec(`prepare ${name} as ${text}`);
    prepared.add(name);
  }
  const args = params.length > 0 ? `(${params.map(literal).join(', ')})` : '';
  return (await client.query<T>(`execute ${name}${args}`)).rows;
}

const likeContains = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
const joinAnd = (parts: SQL[]) => sql.join(parts, sql` and `);
/** Byte-order comparison of the sort keys, the same as the database's `"C"` collation for the ASCII keys used. */
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

// ---- shared pieces --------------------------------------------------------------------------------------------

interface Ordered {
  rank: Rank;
  key: string;
  group: 0 | 1;
  id: string;
  source: string;
  name: string;
}

/** The one total order of results and positions: rank, key, group, id, source, name — all in byte order. */
function compareOrdered(a: Ordered, b: Ordered): number {
  return (
    a.rank - b.rank ||
    cmp(a.key, b.key) ||
    a.group - b.group ||
    cmp(a.id, b.id) ||
    cmp(a.source, b.source) ||
    cmp(a.name, b.name)
  );
}

/** How a query ranks a name and its search text — the same rules as the SQL side; null when it does not match. */
function rankOf(q: NormalisedQuery, exactName: string | undefined, name: string, text: string): Rank | null {
  const allTerms = () => q.terms.every((t) => text.includes(t));
  if (exactName !== undefined) return name === exactName && allTerms() ? 0 : null;
  if (q.terms.length === 0) return 0;
  const key = name.toLowerCase();
  if (q.terms.length === 1 && key === q.text) return 0;
  if (q.terms.length === 1 && key.startsWith(q.text)) return 1;
  return allTerms() ? 2 : null;
}

/** Text-rank conditions: `strpos` for the walk (no index wanted), trigram `LIKE` for the index branch. */
function textConds(q: NormalisedQuery, text: SQL, name: SQL, indexed: boolean): SQL {
  const conds = q.terms.map((term) => {
    if (!indexed) return sql`strpos(${text}, ${term}) > 0`;
    // Every trigram of a long term is one more posting list to intersect: the index gets the term's last
    // characters (the distinctive end of names like sync_customer_acme) and the row is checked for the whole term.
    if (term.length <= INDEX_TERM_CHARS) return sql`${text} like ${likeContains(term)} escape '\\'`;
    return sql`${text} like ${likeContains(term.slice(-INDEX_TERM_CHARS))} escape '\\' and strpos(${text}, ${term}) > 0`;
  });
  // One word that is a prefix of the name already ranked higher.
  if (q.terms.length === 1) conds.push(sql`not starts_with(lower(${name}), ${q.text})`);
  return joinAnd(conds);
}

/**
 * The statement for one page of a ranked search. `p` is the prefix range (ranks 0 and 1). The text rank is the first
 * of these to answer: `w1`, a lazy walk of the first rows in order, which fills the page for a common term; then, if
 * that walk found a few matches (the term is common, a page is near), `w2`, the walk continued; if it found almost
 * none, `g`, every trigram match sorted — unless there are more than `indexMatchesMax`, and then `w2` after all; and
 * `g2`, every match sorted, only if `w2` reached its bound short of a page. Each branch runs only when the ones
 * before left the page short, so one generic plan serves every query of the same shape.
 */
function rankedStatement(o: {
  prefix: SQL;
  walk: (gate: SQL, limit: number) => SQL;
  walkFilter: SQL;
  walkOrder: SQL;
  index: (gate: SQL) => SQL;
  indexOrder: SQL;
  result: (rows: SQL) => SQL;
  n: number;
}): SQL {
  const { n } = o;
  const { firstWalkRows, denseHits, indexMatchesMax, secondWalkRows } = SEARCH_TUNING;
  const short = sql`(select count(*) from p) + (select count(*) from w1) < ${n}`;
  const dense = sql`(select count(*) from w1) >= ${denseHits}`;
  const overflow = sql`(select count(*) from gc) > ${indexMatchesMax}`;
  return sql`
    with p as (${o.prefix}),
    w1 as (
      select s.* from (${o.walk(sql`(select count(*) from p) < ${n}`, firstWalkRows)}) s
      where ${o.walkFilter} order by ${o.walkOrder} limit ${n}
    ),
    gc as materialized (${o.index(sql`${short} and not ${dense}`)} limit ${indexMatchesMax + 1}),
    g as (select * from gc where not ${overflow} order by ${o.indexOrder} limit ${n}),
    w2 as (
      select s.* from (${o.walk(sql`${short} and (${dense} or ${overflow})`, secondWalkRows)}) s
      where ${o.walkFilter} order by ${o.walkOrder} limit ${n}
    ),
    g2 as (
      select * from (${o.index(sql`(select count(*) from w2) < ${n} and (${dense} or ${overflow}) and ${short}`)}) x
      order by ${o.indexOrder} limit ${n}
    )
    ${o.result(sql`select p.*, null::text as st, 'p' as part from p
      union all select w1.*, 'w1' as part from w1
      union all select g.*, 'g' as part from g
      union all select w2.*, 'w2' as part from w2
      union all select g2.*, 'g2' as part from g2`)}`;
}

/** The rows that answer a ranked statement: the prefix rows and the text branch that ran last. */
function rankedRows<T extends { part: string }>(rows: T[]): T[] {
  const text = (['g2', 'w2', 'g'] as const).find((part) => rows.some((r) => r.part === part)) ?? 'w1';
  return rows.filter((r) => r.part === 'p' || r.part === text);
}

interface InstallationState {
  installationId: string;
  enabled: boolean;
  trustMetadata: boolean;
  sourceWorkspaceId: string;
  flowId: string;
  flowSlug: string;
  version: number;
}

/**
 * What each installation of the workspace runs, when it can run: the source flow must be public and released, and a
 * pinned version must itself have been released public (the live version's publicity is the flow's own).
 */
/** What the ranked text search needs to know about a table: its alias, columns, index key and sort order. */
interface RankedTable {
  from: SQL;
  columns: SQL;
  key: SQL;
  order: SQL;
  sortColumns: SQL;
  /** The sort keys as named in the lazily walked subquery (`s.k1, …`) and in the index branch (`k1, …`). */
  walkOrder: SQL;
  indexOrder: SQL;
  /** The name the prefix branch ranks on, as a table column and as the walked subquery's field. */
  name: SQL;
  walkName: SQL;
  searchText: SQL;
}

/**
 * One page of ranked text search over a table: exact name, then name prefix (one term only), then text
 * matches walked in index order or taken from the trigram index. Flows and interfaces share this shape.
 */
function rankedTextStatement<P extends { rank: number }>(
  table: RankedTable,
  q: NormalisedQuery,
  o: {
    base: SQL;
    after: P | undefined;
    afterCond: (resume: P | undefined) => SQL;
    n: number;
    result: (rows: SQL) => SQL;
  },
): SQL {
  const { base, after, afterCond, n } = o;
  const usePrefix = q.terms.length === 1 && (!after || after.rank <= 1);
  const textAfter = afterCond(after?.rank === 2 ? after : undefined);
  const textColumns = sql`${table.columns}, 2 as rank, ${table.sortColumns}, ${table.searchText} as st`;
  return rankedStatement({
    prefix: usePrefix
      ? sql`select ${table.columns}, (case when lower(${table.name}) = ${q.text} then 0 else 1 end) as rank, ${table.sortColumns}
          from ${table.from}
          where ${base} and ${table.key} >= ${q.text} and ${table.key} < ${`${q.text}\u007f`}
            and starts_with(lower(${table.name}), ${q.text})${afterCond(after)}
          order by ${table.order} limit ${n}`
      : sql`select ${table.columns}, 0 as rank, ${table.sortColumns} from ${table.from} where false`,
    walk: (gate, limit) =>
      sql`select ${textColumns} from ${table.from} where ${base}${textAfter} and ${gate}
        order by ${table.order} limit ${sql.raw(String(limit))}`,
    walkFilter: textConds(q, sql.raw('s.st'), table.walkName, false),
    walkOrder: table.walkOrder,
    index: (gate) =>
      sql`select ${textColumns} from ${table.from}
        where ${base}${textAfter} and ${textConds(q, table.searchText, table.name, true)} and ${gate}`,
    indexOrder: table.indexOrder,
    result: o.result,
    n,
  });
}

async function installationStates(db: Database, workspaceId: string): Promise<InstallationState[]> {
  return run<InstallationState>(
    db,
    sql`
      select i.id as "installationId", i.enabled, i.trust_metadata as "trustMetadata",
             i.source_workspace_id as "sourceWorkspaceId", f.id as "flowId", f.slug as "flowSlug",
             (case when i.version_policy = 'pinned' then i.pinned_version else f.live_version end) as version
      from installations i
      join flows f on f.id = i.source_flow_id and f.workspace_id = i.source_workspace_id
                   and f.is_public and f.live_version is not null
      where i.workspace_id = ${workspaceId}
        and (i.version_policy <> 'pinned' or exists (
          select 1 from flow_versions v
          where v.flow_id = f.id and v.workspace_id = f.workspace_id and v.version = i.pinned_version and v.is_public))
      limit 1000`,
    { generic: false },
  );
}

interface VersionEntry {
  name: string | null;
  description: string | null;
  tags: string[];
  searchText: string;
  tools: ReturnType<typeof toolRowsFromModel>;
}

const VERSION_CACHE_MAX = 5000;
/** Per database handle; entries describe released versions, which never change, so they never go stale. */
const versionCaches = new WeakMap<Database, Map<string, VersionEntry>>();
const versionKey = (s: { flowId: string; version: number }) => `${s.flowId}@${s.version}`;

async function versionEntries(db: Database, states: InstallationState[]): Promise<Map<string, VersionEntry>> {
  let cache = versionCaches.get(db);
  if (!cache) {
    cache = new Map();
    versionCaches.set(db, cache);
  }
  const known = cache;
  const missing = [
    ...new Map(states.filter((s) => !known.has(versionKey(s))).map((s) => [versionKey(s), s])).values(),
  ];
  if (missing.length > 0) {
    const rows = rowsOf<{ flowId: string; version: number; model: FlowModel | string }>(
      await db.execute(sql`
        select v.flow_id as "flowId", v.version, v.model from flow_versions v
        where (v.workspace_id, v.flow_id, v.version) in (${sql.join(
          missing.map((s) => sql`(${s.sourceWorkspaceId}, ${s.flowId}, ${s.version})`),
          sql`, `,
        )})`),
    );
    for (const r of rows) {
      const model = (typeof r.model === 'string' ? JSON.parse(r.model) : r.model) as FlowModel;
      known.set(versionKey(r), {
        name: model.name ?? null,
        description: model.description ?? null,
        tags: model.tags,
        searchText: flowSearchText(model),
        tools: toolRowsFromModel(model),
      });
    }
    for (const oldest of known.keys()) {
      if (known.size <= VERSION_CACHE_MAX) break;
      known.delete(oldest);
    }
  }
  const out = new Map<string, VersionEntry>();
  for (const s of states) {
    const entry = known.get(versionKey(s));
    if (entry) out.set(versionKey(s), entry);
  }
  return out;
}

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
  trustMetadata: boolean;
  rank: Rank;
  part: string;
}

const TOOL_COLUMNS = sql.raw(
  `t.flow_id as "flowId", t.flow_slug as "flowSlug", t.source, t.tool_name as "toolName", t.invocation, t.version, t.title, t.description, t.flow_name as "flowName"`,
);
const TOOL_KEY = sql.raw(`(lower(t.tool_name) collate "C")`);
const TOOL_ORDER = sql.raw(
  `(lower(t.tool_name) collate "C"), (t.flow_slug collate "C"), t.source, (t.tool_name collate "C")`,
);
// The sort keys as columns, so a query over the walk sees its input as already ordered and pulls it lazily.
const TOOL_SORT_COLUMNS = sql.raw(
  `(lower(t.tool_name) collate "C") as k1, (t.flow_slug collate "C") as k2, t.source as k3, (t.tool_name collate "C") as k4`,
);
const TOOL_RESULT = sql.raw(
  `u."flowId", u."flowSlug", u.source, u."toolName", u.invocation, u.version, u.title, u.description, u."flowName", u.rank, u.part`,
);
const TOOL_TABLE: RankedTable = {
  from: sql.raw('flow_tools t'),
  columns: TOOL_COLUMNS,
  key: TOOL_KEY,
  order: TOOL_ORDER,
  sortColumns: TOOL_SORT_COLUMNS,
  walkOrder: sql.raw('s.k1, s.k2, s.k3, s.k4'),
  indexOrder: sql.raw('k1, k2, k3, k4'),
  name: sql.raw('t.tool_name'),
  walkName: sql.raw('s."toolName"'),
  searchText: sql.raw('t.search_text'),
};

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
  const q = normaliseQuery(options.query);
  const exactName = options.toolName;
  const after = options.after;
  const [own, states] = await Promise.all([
    ownTools(db, workspaceId, q, exactName, after, limit + 1, options.includeDraft === true),
    options.includeInstallations === false ? Promise.resolve([]) : installationStates(db, workspaceId),
  ]);
  const entries = states.length > 0 ? await versionEntries(db, states) : new Map<string, VersionEntry>();

  const found: Array<Ordered & { hit: FlowToolHit }> = own.map((r) => ({
    rank: r.rank,
    key: r.toolName.toLowerCase(),
    group: 0,
    id: r.flowSlug,
    source: r.source,
    name: r.toolName,
    hit: {
      origin: 'workspace',
      flowId: r.flowId,
      flowSlug: r.flowSlug,
      toolName: r.toolName,
      invocation: r.invocation,
      source: r.source,
      version: r.version,
      title: r.title,
      description: r.description,
      flowName: r.flowName,
      trustMetadata: r.trustMetadata === true,
      installationId: null,
      enabled: null,
      sourceWorkspaceId: null,
      rank: r.rank,
    },
  }));
  const resume = after ? { ...after, name: after.toolName } : undefined;
  for (const s of states) {
    for (const tool of entries.get(versionKey(s))?.tools ?? []) {
      const rank = rankOf(q, exactName, tool.toolName, tool.searchText);
      if (rank === null) continue;
      const order: Ordered = {
        rank,
        key: tool.toolName.toLowerCase(),
        group: 1,
        id: s.installationId,
        source: '',
        name: tool.toolName,
      };
      if (resume && compareOrdered(order, resume) <= 0) continue;
      found.push({
        ...order,
        hit: {
          origin: 'installation',
          flowId: s.flowId,
          flowSlug: s.flowSlug,
          toolName: tool.toolName,
          invocation: tool.invocation,
          source: 'live',
          version: s.version,
          title: tool.title,
          description: tool.description,
          flowName: tool.flowName,
          trustMetadata: s.trustMetadata,
          installationId: s.installationId,
          enabled: s.enabled,
          sourceWorkspaceId: s.sourceWorkspaceId,
          rank,
        },
      });
    }
  }
  found.sort(compareOrdered);
  const page = found.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page.map((c) => c.hit),
    next:
      found.length > limit && last
        ? {
            rank: last.rank,
            key: last.key,
            group: last.group,
            id: last.id,
            source: last.source,
            toolName: last.name,
          }
        : null,
  };
}

/** The workspace's own interfaces for one page, in one statement, with each flow's trust opt-in. */
async function ownTools(
  db: Database,
  workspaceId: string,
  q: NormalisedQuery,
  exactName: string | undefined,
  after: ToolSearchPosition | undefined,
  n: number,
  includeDraft: boolean,
): Promise<OwnToolRow[]> {
  const sources = includeDraft ? sql.raw(`('live','draft')`) : sql.raw(`('live')`);
  const base = sql`t.workspace_id = ${workspaceId} and t.source in ${sources}`;
  const afterCond = (resume: ToolSearchPosition | undefined) =>
    !resume
      ? sql``
      : resume.group === 0
        ? sql` and (${TOOL_ORDER}) > (${resume.key}, ${resume.id}, ${resume.source}, ${resume.toolName})`
        : sql` and ${TOOL_KEY} > ${resume.key}`;
  const withTrust = (rows: SQL) => sql`
    select ${TOOL_RESULT}, coalesce(f.trust_metadata, false) as "trustMetadata" from (${rows}) u
    left join flows f on f.id = u."flowId" and f.workspace_id = ${workspaceId}`;

  if (exactName !== undefined || q.terms.length === 0) {
    const terms = q.terms.map((term) => sql` and strpos(t.search_text, ${term}) > 0`);
    const filter =
      exactName === undefined ? sql`` : sql` and t.tool_name = ${exactName}${sql.join(terms, sql``)}`;
    return run<OwnToolRow>(
      db,
      withTrust(sql`select ${TOOL_COLUMNS}, 0 as rank, 'p' as part from flow_tools t
        where ${base}${filter}${afterCond(after)} order by ${TOOL_ORDER} limit ${n}`),
    );
  }

  const statement = rankedTextStatement(TOOL_TABLE, q, { base, after, afterCond, n, result: withTrust });
  return rankedRows(await run<OwnToolRow>(db, statement));
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
  rank: Rank;
  part: string;
}

const FLOW_COLUMNS = sql.raw(
  `f.id as "flowId", f.slug as "flowSlug", f.name, f.description, f.tags, f.live_version as "liveVersion", f.latest_version as "latestVersion", (f.draft_literal is not null) as "hasDraft", f.is_public as "isPublic", f.trust_metadata as "trustMetadata"`,
);
const FLOW_KEY = sql.raw(`(lower(f.slug) collate "C")`);
const FLOW_ORDER = sql.raw(`(lower(f.slug) collate "C"), (f.slug collate "C")`);
const FLOW_SORT_COLUMNS = sql.raw(`(lower(f.slug) collate "C") as k1, (f.slug collate "C") as k2`);
const FLOW_RESULT = sql.raw(
  `u."flowId", u."flowSlug", u.name, u.description, u.tags, u."liveVersion", u."latestVersion", u."hasDraft", u."isPublic", u."trustMetadata", u.rank, u.part`,
);
const FLOW_TABLE: RankedTable = {
  from: sql.raw('flows f'),
  columns: FLOW_COLUMNS,
  key: FLOW_KEY,
  order: FLOW_ORDER,
  sortColumns: FLOW_SORT_COLUMNS,
  walkOrder: sql.raw('s.k1, s.k2'),
  indexOrder: sql.raw('k1, k2'),
  name: sql.raw('f.slug'),
  walkName: sql.raw('s."flowSlug"'),
  searchText: sql.raw('f.search_text'),
};

/** The workspace's flows and the flows it installed: slug match, slug prefix, then text match. */
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
  const q = normaliseQuery(options.query);
  const after = options.after;
  const [own, states] = await Promise.all([
    ownFlows(db, workspaceId, q, after, limit + 1),
    options.includeInstallations === false ? Promise.resolve([]) : installationStates(db, workspaceId),
  ]);
  const entries = states.length > 0 ? await versionEntries(db, states) : new Map<string, VersionEntry>();

  const found: Array<Ordered & { hit: FlowHit }> = own.map((r) => ({
    rank: r.rank,
    key: r.flowSlug.toLowerCase(),
    group: 0,
    id: r.flowSlug,
    source: '',
    name: '',
    hit: {
      origin: 'workspace',
      flowId: r.flowId,
      flowSlug: r.flowSlug,
      name: r.name,
      description: r.description,
      tags: r.tags,
      liveVersion: r.liveVersion,
      latestVersion: r.latestVersion,
      hasDraft: r.hasDraft,
      isPublic: r.isPublic,
      trustMetadata: r.trustMetadata,
      installationId: null,
      enabled: null,
      sourceWorkspaceId: null,
      version: null,
      rank: r.rank,
    },
  }));
  const resume = after ? { ...after, source: '', name: '' } : undefined;
  for (const s of states) {
    const entry = entries.get(versionKey(s));
    if (!entry) continue;
    const rank = rankOf(q, undefined, s.flowSlug, entry.searchText);
    if (rank === null) continue;
    const order: Ordered = {
      rank,
      key: s.flowSlug.toLowerCase(),
      group: 1,
      id: s.installationId,
      source: '',
      name: '',
    };
    if (resume && compareOrdered(order, resume) <= 0) continue;
    found.push({
      ...order,
      hit: {
        origin: 'installation',
        flowId: s.flowId,
        flowSlug: s.flowSlug,
        name: entry.name,
        description: entry.description,
        tags: entry.tags,
        liveVersion: null,
        latestVersion: null,
        hasDraft: false,
        isPublic: true,
        trustMetadata: s.trustMetadata,
        installationId: s.installationId,
        enabled: s.enabled,
        sourceWorkspaceId: s.sourceWorkspaceId,
        version: s.version,
        rank,
      },
    });
  }
  found.sort(compareOrdered);
  const page = found.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page.map((c) => c.hit),
    next:
      found.length > limit && last
        ? { rank: last.rank, key: last.key, group: last.group, id: last.id }
        : null,
  };
}

async function ownFlows(
  db: Database,
  workspaceId: string,
  q: NormalisedQuery,
  after: FlowSearchPosition | undefined,
  n: number,
): Promise<OwnFlowRow[]> {
  const base = sql`f.workspace_id = ${workspaceId}`;
  const afterCond = (resume: FlowSearchPosition | undefined) =>
    !resume
      ? sql``
      : resume.group === 0
        ? sql` and (${FLOW_ORDER}) > (${resume.key}, ${resume.id})`
        : sql` and ${FLOW_KEY} > ${resume.key}`;
  if (q.terms.length === 0) {
    return run<OwnFlowRow>(
      db,
      sql`select ${FLOW_COLUMNS}, 0 as rank, 'p' as part from flows f
        where ${base}${afterCond(after)} order by ${FLOW_ORDER} limit ${n}`,
    );
  }
  const statement = rankedTextStatement(FLOW_TABLE, q, {
    base,
    after,
    afterCond,
    n,
    result: (rows) => sql`select ${FLOW_RESULT} from (${rows}) u`,
  });
  return rankedRows(await run<OwnFlowRow>(db, statement));
}
