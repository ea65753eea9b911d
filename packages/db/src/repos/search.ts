import { is, Placeholder, type Query, type SQL, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Database } from '../client.js';

/**
 * Search over a workspace's flows and flow MCP interfaces, plus the public flows it installed.
 *
 * Ranking: exact name (tool name, or flow slug) first, then names starting with the query, then entries whose
 * search text contains every query term. Within a rank, entries are in byte order of the lowercased name (the
 * `"C"` collation, so the order is the same on every database), then a tiebreak that makes the order total, so a
 * position (`after`) resumes a page exactly.
 *
 * One statement per page, with every branch gated at run time so one generic plan serves every query of a shape.
 * Own entries: exact and prefix matches are a range of the name index; for the text rank, a short lazy walk of the
 * name index serves common terms; when it leaves the page short, the trigram GIN index (which also holds the
 * workspace id, so other workspaces' rows are never read) returns up to `SEARCH_TUNING.indexMatchesMax` matches to
 * sort; only a term with more matches than that — common enough that a page is near — resumes the lazy walk.
 * Installations (at most a few hundred per workspace) are ranked from the summary each released version stores. The
 * same statement returns what a trust decision needs — whether an opt-in exists and whether the definition a row
 * describes is byte-identical to the one reviewed — so callers make no query per hit. Measured in
 * bench/flow-search.ts.
 */

export const SEARCH_LIMIT_MAX = 50;
export const SEARCH_QUERY_MAX_LENGTH = 200;
export const SEARCH_MAX_TERMS = 8;
/**
 * Bounds of the text-rank strategy (see `rankedStatement`). `firstWalkRows`: rows of the name index the first lazy walk
 * may read (a common term fills a page well within them). `denseHits`: matches that walk must have found to take the
 * term as common and keep walking, rather than asking the trigram index. `indexMatchesMax`: trigram matches still
 * sorted whole; with more, the term is common enough to walk for. `secondWalkRows`: rows the second walk may read —
 * more than `indexMatchesMax` matches fill a page within `n × rows ÷ indexMatchesMax` rows, so this covers workspaces
 * of well over 100,000 interfaces, and beyond it a last sorted trigram branch keeps the answer exact. Tests shrink
 * these to reach every branch on small data.
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

/**
 * What a trust decision needs of a row, computed by the search statement: whether the owner (own flows) or the
 * installer (installations) opted in to show the flow's authored text, and whether the definition the row describes
 * is byte-identical to the one reviewed then (never true for a draft).
 */
export interface TrustFacts {
  optedIn: boolean;
  /** The digest of the definition reviewed when opting in (null without an opt-in). */
  reviewedSha256: string | null;
  pinMatches: boolean;
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
  /** Flow-authored, untrusted: the caller decides whether a model may see it. */
  title: string | null;
  description: string | null;
  flowName: string | null;
  trust: TrustFacts;
  installationId: string | null;
  /** Installations only: whether it may run. */
  enabled: boolean | null;
  sourceWorkspaceId: string | null;
  /**
   * Browsing with drafts only, where each own tool is listed once: for a live row, whether the flow's draft is the
   * live definition byte for byte (`same`), differs (`differs`) or no longer declares the tool (`absent`); `only` for a
   * tool only the draft declares. Null otherwise.
   */
  draft: DraftState | null;
  rank: Rank;
}

export type DraftState = 'same' | 'differs' | 'absent' | 'only';

export interface FlowHit {
  origin: 'workspace' | 'installation';
  flowId: string;
  flowSlug: string;
  /**
   * Flow-authored, untrusted: of the definition the entry describes — an own flow's live version (its draft when
   * nothing is released), or the version an installation runs.
   */
  name: string | null;
  description: string | null;
  tags: string[];
  /** Tool names of that definition's `:mcp` interfaces. */
  toolNames: string[];
  /** Own flows only. */
  liveVersion: number | null;
  latestVersion: number | null;
  hasDraft: boolean;
  isPublic: boolean;
  trust: TrustFacts;
  installationId: string | null;
  enabled: boolean | null;
  sourceWorkspaceId: string | null;
  versionPolicy: 'pinned' | 'track-latest' | null;
  pinnedVersion: number | null;
  /** Installations: slot → connection id of the installing workspace. */
  slotBindings: Record<string, string> | null;
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

const likeContains = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/*
 * Statement text is built once per query shape (see `compiledFor`): every value a query supplies is a named
 * placeholder, bound per call, so a search composes no SQL on its hot path.
 */
const WORKSPACE = sql.placeholder('ws');
const QUERY_TEXT = sql.placeholder('text');
/** Upper bound of the prefix range: the query text followed by the highest ASCII character. */
const QUERY_TEXT_END = sql.placeholder('textEnd');
const EXACT_NAME = sql.placeholder('exact');
const PAGE_ROWS = sql`${sql.placeholder('n')}`;
const WITH_INSTALLATIONS = sql.placeholder('inst');
const AFTER = {
  rank: sql.placeholder('aRank'),
  key: sql.placeholder('aKey'),
  group: sql.placeholder('aGroup'),
  id: sql.placeholder('aId'),
  source: sql.placeholder('aSource'),
  name: sql.placeholder('aName'),
};
/** Term `i` of the query, and the `LIKE` pattern the trigram index gets for it. */
const termAt = (i: number) => sql.placeholder(`t${i}`);
const likeAt = (i: number) => sql.placeholder(`l${i}`);

const dialect = new PgDialect();

/** A statement's text, and for each of its parameters either the placeholder that supplies it or a constant. */
interface Compiled {
  text: string;
  slots: Array<string | { value: unknown }>;
}

/** Shapes are few (terms ≤ SEARCH_MAX_TERMS, each short or long; resume kinds; flags); the bound is a safety net. */
const COMPILED_MAX = 2000;
const compiled = new Map<string, Compiled>();

function placeholderName(p: unknown): string | undefined {
  if (is(p, Placeholder)) return p.name;
  const value = (p as { value?: unknown } | null)?.value;
  return is(value, Placeholder) ? value.name : undefined;
}

/** The compiled statement of a shape; `build` runs only the first time a shape is seen. */
function compiledFor(key: string, build: () => SQL): Compiled {
  const t = SEARCH_TUNING;
  // The tuning bounds are written into the text, and tests change them.
  const fullKey = `${key}|${t.firstWalkRows},${t.denseHits},${t.indexMatchesMax},${t.secondWalkRows}`;
  let c = compiled.get(fullKey);
  if (!c) {
    const { sql: text, params } = dialect.sqlToQuery(build());
    c = { text, slots: params.map((p) => placeholderName(p) ?? { value: p }) };
    if (compiled.size >= COMPILED_MAX) compiled.clear();
    compiled.set(fullKey, c);
  }
  return c;
}

function bind(c: Compiled, values: Record<string, unknown>): Query {
  return { sql: c.text, params: c.slots.map((s) => (typeof s === 'string' ? values[s] : s.value)) };
}

/** Shape of a query's terms: each is short (`s`, given whole to the index) or long (`l`). */
const termsShape = (q: NormalisedQuery) =>
  q.terms.map((t) => (t.length <= INDEX_TERM_CHARS ? 's' : 'l')).join('');

/** The values of the placeholders every search statement shares. */
function searchValues(workspaceId: string, q: NormalisedQuery, n: number, after: Ordered | undefined) {
  const values: Record<string, unknown> = {
    ws: workspaceId,
    text: q.text,
    textEnd: `${q.text}\u007f`,
    n,
  };
  q.terms.forEach((term, i) => {
    values[`t${i}`] = term;
    values[`l${i}`] = likeContains(term.length <= INDEX_TERM_CHARS ? term : term.slice(-INDEX_TERM_CHARS));
  });
  if (after) {
    values.aRank = after.rank;
    values.aKey = after.key;
    values.aGroup = after.group;
    values.aId = after.id;
    values.aSource = after.source;
    values.aName = after.name;
  }
  return values;
}
const joinAnd = (parts: SQL[]) => sql.join(parts, sql` and `);

/** Text-rank conditions: `strpos` for the walk (no index wanted), trigram `LIKE` for the index branch. */
function textConds(q: NormalisedQuery, text: SQL, name: SQL, indexed: boolean): SQL {
  const conds = q.terms.map((term, i) => {
    if (!indexed) return sql`strpos(${text}, ${termAt(i)}) > 0`;
    // Every trigram of a long term is one more posting list to intersect: the index gets the term's last
    // characters (the distinctive end of names like sync_customer_acme) and the row is checked for the whole term.
    if (term.length <= INDEX_TERM_CHARS) return sql`${text} like ${likeAt(i)} escape '\\'`;
    return sql`${text} like ${likeAt(i)} escape '\\' and strpos(${text}, ${termAt(i)}) > 0`;
  });
  // One word that is a prefix of the name already ranked higher.
  if (q.terms.length === 1) conds.push(sql`not starts_with(lower(${name}), ${QUERY_TEXT})`);
  return joinAnd(conds);
}

/**
 * The rank a query gives an entry, as SQL over its name and search text, for entries not served by an index
 * (installations): 0 exact name, 1 name prefix (one term), 2 every term in the text; null when it does not match.
 */
function rankSql(q: NormalisedQuery, exact: boolean, name: SQL, text: SQL): SQL {
  const allTerms = q.terms.length
    ? joinAnd(q.terms.map((_, i) => sql`strpos(${text}, ${termAt(i)}) > 0`))
    : sql`true`;
  if (exact) return sql`(case when ${name} = ${EXACT_NAME} and ${allTerms} then 0 end)`;
  if (q.terms.length === 0) return sql`0`;
  if (q.terms.length === 1) {
    return sql`(case when lower(${name}) = ${QUERY_TEXT} then 0
      when starts_with(lower(${name}), ${QUERY_TEXT}) then 1 when ${allTerms} then 2 end)`;
  }
  return sql`(case when ${allTerms} then 2 end)`;
}

/**
 * The statement for one page of a ranked search of own entries. `p` is the prefix range (ranks 0 and 1). The text
 * rank is the first of these to answer: `w1`, a lazy walk of the first rows in order, which fills the page for a
 * common term; then, if that walk found a few matches (the term is common, a page is near), `w2`, the walk
 * continued; if it found almost none, `g`, every trigram match sorted — unless there are more than
 * `indexMatchesMax`, and then `w2` after all; and `g2`, every match sorted, only if `w2` reached its bound short of a
 * page. Each branch runs only when the ones before left the page short; the answer is the prefix rows and the text
 * branch that ran last.
 */
function rankedStatement(o: {
  prefix: SQL;
  walk: (gate: SQL, limit: number) => SQL;
  walkFilter: SQL;
  walkOrder: SQL;
  index: (gate: SQL) => SQL;
  indexOrder: SQL;
  n: SQL;
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
    ),
    r as (
      select p.*, null::text as st, 'p' as part from p
      union all select w1.*, 'w1' as part from w1
      union all select g.*, 'g' as part from g
      union all select w2.*, 'w2' as part from w2
      union all select g2.*, 'g2' as part from g2
    )
    select * from r where part = 'p' or part = (
      select case when bool_or(part = 'g2') then 'g2' when bool_or(part = 'w2') then 'w2'
        when bool_or(part = 'g') then 'g' else 'w1' end
      from r)`;
}

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
 * One page of own entries: browse (every row in order) or the ranked text search of `rankedStatement`; flows and
 * interfaces share this shape. Rows carry `rank`.
 */
function ownStatement<P extends { rank: number }>(
  table: RankedTable,
  q: NormalisedQuery,
  o: { base: SQL; filter?: SQL; after: P | undefined; afterCond: (resume: P | undefined) => SQL; n: SQL },
): SQL {
  const { base, after, afterCond, n } = o;
  if (o.filter !== undefined || q.terms.length === 0) {
    return sql`select ${table.columns}, 0 as rank from ${table.from}
      where ${base}${o.filter ?? sql``}${afterCond(after)} order by ${table.order} limit ${n}`;
  }
  const usePrefix = q.terms.length === 1 && (!after || after.rank <= 1);
  const textAfter = afterCond(after?.rank === 2 ? after : undefined);
  const textColumns = sql`${table.columns}, 2 as rank, ${table.sortColumns}, ${table.searchText} as st`;
  return rankedStatement({
    prefix: usePrefix
      ? sql`select ${table.columns}, (case when lower(${table.name}) = ${QUERY_TEXT} then 0 else 1 end) as rank, ${table.sortColumns}
          from ${table.from}
          where ${base} and ${table.key} >= ${QUERY_TEXT} and ${table.key} < ${QUERY_TEXT_END}
            and starts_with(lower(${table.name}), ${QUERY_TEXT})${afterCond(after)}
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
    n,
  });
}

/**
 * The installations of a workspace that can run, with the version each runs (`v`): the source flow must be public
 * and released, and a pinned version must itself have been released public (the live version's publicity is the
 * flow's own). These joins are the only reads of another workspace's rows, and only of public released versions.
 */
const INSTALLED_VERSIONS = sql.raw(`installations i
    join flows sf on sf.id = i.source_flow_id and sf.workspace_id = i.source_workspace_id
      and sf.is_public and sf.live_version is not null
    join flow_versions v on v.flow_id = sf.id and v.workspace_id = sf.workspace_id
      and v.version = (case when i.version_policy = 'pinned' then i.pinned_version else sf.live_version end)
      and (i.version_policy <> 'pinned' or v.is_public)`);

/** Whether an opt-in covers a definition: its pinned digest equals the definition's (false when either is missing). */
const pinMatches = (pinned: string, digest: string) => sql.raw(`coalesce(${pinned} = ${digest}, false)`);

/** The columns of the one total order of merged results, all in byte order. */
const MERGED_KEYS = sql.raw(
  `m.rank, (m.key collate "C"), m.grp, (m."sortId" collate "C"), (m."sortSource" collate "C"), (m."sortName" collate "C")`,
);

interface Ordered {
  rank: Rank;
  key: string;
  group: 0 | 1;
  id: string;
  source: string;
  name: string;
}

/** Rows strictly after a position in the merged order. */
function afterMerged(after: Ordered | undefined): SQL {
  if (!after) return sql`true`;
  return sql`(${MERGED_KEYS}) > (${AFTER.rank}, ${AFTER.key}, ${AFTER.group}, ${AFTER.id}, ${AFTER.source}, ${AFTER.name})`;
}

/**
 * Merges a page of own rows and a page of installation rows (both carrying the merged-order columns) into one page.
 * Each side is already bounded to the page size; only installations need the position applied here.
 */
function mergedPage(own: SQL, installed: SQL, after: Ordered | undefined, n: SQL): SQL {
  return sql`
    select m.* from (
      (${own})
      union all
      (select m.* from (${installed}) m where m.rank is not null and ${afterMerged(after)}
        order by ${MERGED_KEYS} limit ${n})
    ) m
    order by ${MERGED_KEYS} limit ${n}`;
}

interface MergedRow {
  rank: Rank;
  key: string;
  grp: 0 | 1;
  sortId: string;
  sortSource: string;
  sortName: string;
}

function nextPosition(rows: MergedRow[], limit: number): Ordered | null {
  const last = rows[limit - 1];
  if (rows.length <= limit || !last) return null;
  return {
    rank: last.rank,
    key: last.key,
    group: last.grp,
    id: last.sortId,
    source: last.sortSource,
    name: last.sortName,
  };
}

// ---- flow tools -----------------------------------------------------------------------------------------------

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

interface ToolRow extends MergedRow {
  flowId: string;
  flowSlug: string;
  source: 'live' | 'draft';
  toolName: string;
  invocation: string;
  version: number | null;
  title: string | null;
  description: string | null;
  flowName: string | null;
  installationId: string | null;
  enabled: boolean | null;
  sourceWorkspaceId: string | null;
  optedIn: boolean;
  reviewedSha256: string | null;
  pinMatches: boolean;
  draftState: DraftState | null;
}

/**
 * The one statement of a search page (own tools and installed ones, ranked, trust facts joined): its text, the same
 * for every query of a shape, and this query's parameters. Exported so the benchmark can `EXPLAIN` exactly what runs.
 */
export function flowToolSearchStatement(workspaceId: string, options: ToolSearchOptions): Query {
  const q = normaliseQuery(options.query);
  const exact = options.toolName !== undefined;
  const after = options.after;
  const draft = options.includeDraft === true;
  const key = `tools|${draft ? 'd' : 'l'}|${exact ? 'x' : ''}|${termsShape(q)}|${after ? `${after.rank}${after.group}` : '-'}`;
  const c = compiledFor(key, () => toolStatement(q, { exact, after, draft }));
  const values = searchValues(
    workspaceId,
    q,
    clampLimit(options.limit) + 1,
    after && { ...after, name: after.toolName },
  );
  values.exact = options.toolName;
  values.inst = options.includeInstallations !== false;
  return bind(c, values);
}

/** The statement of a tool search shape, every value a placeholder. */
function toolStatement(
  q: NormalisedQuery,
  o: { exact: boolean; after: ToolSearchPosition | undefined; draft: boolean },
): SQL {
  const { exact, after } = o;
  // Each source has its own partial trigram index (schema.ts); spelled as literals so a generic plan can use them.
  const sources = o.draft
    ? sql.raw(`(t.source = 'live' or t.source = 'draft')`)
    : sql.raw(`t.source = 'live'`);
  // Browsing lists each own tool once: the live row stands for its draft twin (and says how the draft compares), so a
  // draft row is kept only for a tool the live version does not declare.
  const collapse = o.draft && !exact && q.terms.length === 0;
  const once = collapse
    ? sql.raw(` and (t.source = 'live' or not exists (select 1 from flow_tools l where l.flow_id = t.flow_id
        and l.source = 'live' and l.tool_name = t.tool_name))`)
    : sql``;
  const draftState = collapse
    ? sql.raw(`(case when o.source = 'draft' then 'only' when d.tool_name is null then 'absent'
        when f.draft_literal = lv.literal then 'same' else 'differs' end)`)
    : sql.raw('null::text');
  const draftTwin = collapse
    ? sql` left join flow_tools d on d.flow_id = o."flowId" and d.workspace_id = ${WORKSPACE}
      and d.source = 'draft' and d.tool_name = o."toolName"`
    : sql``;
  const own = ownStatement(TOOL_TABLE, q, {
    base: sql`t.workspace_id = ${WORKSPACE} and ${sources}${once}`,
    filter: !exact
      ? undefined
      : sql` and t.tool_name = ${EXACT_NAME}${sql.join(
          q.terms.map((_, i) => sql` and strpos(t.search_text, ${termAt(i)}) > 0`),
          sql``,
        )}`,
    after,
    afterCond: (resume) =>
      !resume
        ? sql``
        : resume.group === 0
          ? sql` and (${TOOL_ORDER}) > (${AFTER.key}, ${AFTER.id}, ${AFTER.source}, ${AFTER.name})`
          : sql` and ${TOOL_KEY} > ${AFTER.key}`,
    n: PAGE_ROWS,
  });
  const ownRows = sql`
    select o."flowId", o."flowSlug", o.source, o."toolName", o.invocation, o.version, o.title, o.description,
           o."flowName", o.rank, lower(o."toolName") as key, 0 as grp, o."flowSlug" as "sortId",
           o.source as "sortSource", o."toolName" as "sortName", null::text as "installationId",
           null::boolean as enabled, null::text as "sourceWorkspaceId", f.trust_metadata as "optedIn",
           f.trusted_metadata_sha256 as "reviewedSha256", (o.source = 'live' and ${pinMatches('f.trusted_metadata_sha256', 'lv.metadata_sha256')}) as "pinMatches",
           ${draftState} as "draftState"
    from (${own}) o
    join flows f on f.id = o."flowId" and f.workspace_id = ${WORKSPACE}
    left join flow_versions lv on lv.flow_id = o."flowId" and lv.workspace_id = ${WORKSPACE}
      and lv.version = o.version${draftTwin}`;

  const tool = sql.raw(`(tool.value->>'toolName')`);
  const installedRows = sql`
    select sf.id as "flowId", sf.slug as "flowSlug", 'live' as source, ${tool} as "toolName",
           (tool.value->>'invocation') as invocation, v.version, (tool.value->>'title') as title,
           (tool.value->>'description') as description, (tool.value->>'flowName') as "flowName",
           ${rankSql(q, exact, tool, sql.raw(`(tool.value->>'searchText')`))} as rank, lower(${tool}) as key,
           1 as grp, i.id as "sortId", '' as "sortSource", ${tool} as "sortName", i.id as "installationId",
           i.enabled, i.source_workspace_id as "sourceWorkspaceId", i.trust_metadata as "optedIn",
           i.trusted_metadata_sha256 as "reviewedSha256",
           ${pinMatches('i.trusted_metadata_sha256', 'v.metadata_sha256')} as "pinMatches",
           null::text as "draftState"
    from ${INSTALLED_VERSIONS}
    cross join lateral jsonb_array_elements(v.summary->'tools') as tool(value)
    where i.workspace_id = ${WORKSPACE} and ${WITH_INSTALLATIONS}`;

  return mergedPage(ownRows, installedRows, after && { ...after, name: after.toolName }, PAGE_ROWS);
}

/** EXPLAIN ANALYZE of a search page's statement, one plan line per element (benchmarks and diagnostics). */
export async function explainFlowToolSearch(
  db: Database,
  workspaceId: string,
  options: ToolSearchOptions,
): Promise<string[]> {
  const statement = flowToolSearchStatement(workspaceId, options);
  const rows = await db.statements.rows<Record<string, unknown>>({
    sql: `explain (analyze, costs off, timing off, summary off) ${statement.sql}`,
    params: statement.params,
  });
  return rows.map((r) => String(Object.values(r)[0] ?? ''));
}

export async function searchFlowTools(
  db: Database,
  workspaceId: string,
  options: ToolSearchOptions,
): Promise<SearchPage<FlowToolHit, ToolSearchPosition>> {
  const limit = clampLimit(options.limit);
  const rows = await db.statements.prepared<ToolRow>(flowToolSearchStatement(workspaceId, options));
  const next = nextPosition(rows, limit);
  return {
    items: rows.slice(0, limit).map((r) => ({
      origin: r.grp === 0 ? 'workspace' : 'installation',
      flowId: r.flowId,
      flowSlug: r.flowSlug,
      toolName: r.toolName,
      invocation: r.invocation,
      source: r.source,
      version: r.version,
      title: r.title,
      description: r.description,
      flowName: r.flowName,
      trust: {
        optedIn: r.optedIn === true,
        reviewedSha256: r.reviewedSha256,
        pinMatches: r.pinMatches === true,
      },
      installationId: r.installationId,
      enabled: r.enabled,
      sourceWorkspaceId: r.sourceWorkspaceId,
      draft: r.draftState,
      rank: r.rank,
    })),
    next: next && {
      rank: next.rank,
      key: next.key,
      group: next.group,
      id: next.id,
      source: next.source,
      toolName: next.name,
    },
  };
}

// ---- flows ----------------------------------------------------------------------------------------------------

const FLOW_COLUMNS = sql.raw(`f.id as "flowId", f.slug as "flowSlug"`);
const FLOW_KEY = sql.raw(`(lower(f.slug) collate "C")`);
const FLOW_ORDER = sql.raw(`(lower(f.slug) collate "C"), (f.slug collate "C")`);
const FLOW_SORT_COLUMNS = sql.raw(`(lower(f.slug) collate "C") as k1, (f.slug collate "C") as k2`);
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

interface FlowRow extends MergedRow {
  flowId: string;
  flowSlug: string;
  name: string | null;
  description: string | null;
  tags: string[] | null;
  toolNames: string[] | null;
  liveVersion: number | null;
  latestVersion: number | null;
  hasDraft: boolean;
  isPublic: boolean;
  installationId: string | null;
  enabled: boolean | null;
  sourceWorkspaceId: string | null;
  versionPolicy: 'pinned' | 'track-latest' | null;
  pinnedVersion: number | null;
  slotBindings: Record<string, string> | null;
  version: number | null;
  optedIn: boolean;
  reviewedSha256: string | null;
  pinMatches: boolean;
}

/** Tool names of a version summary. */
const summaryToolNames = (summary: string) =>
  sql.raw(`coalesce(jsonb_path_query_array(${summary}, '$.tools[*].toolName'), '[]'::jsonb)`);

/** The statement of a flow search shape, every value a placeholder. */
function flowStatement(q: NormalisedQuery, after: FlowSearchPosition | undefined): SQL {
  const own = ownStatement(FLOW_TABLE, q, {
    base: sql`f.workspace_id = ${WORKSPACE}`,
    after,
    afterCond: (resume) =>
      !resume
        ? sql``
        : resume.group === 0
          ? sql` and (${FLOW_ORDER}) > (${AFTER.key}, ${AFTER.id})`
          : sql` and ${FLOW_KEY} > ${AFTER.key}`,
    n: PAGE_ROWS,
  });
  // Authored text and tool names of an own flow come from its live version, never from a newer draft (any
  // flows.manage key can rewrite a draft after an admin's review); a flow with nothing released shows its draft.
  const ownRows = sql`
    select f.id as "flowId", f.slug as "flowSlug",
           (case when lv.version is null then f.name else lv.summary->>'name' end) as name,
           (case when lv.version is null then f.description else lv.summary->>'description' end) as description,
           (case when lv.version is null then f.tags else lv.summary->'tags' end) as tags,
           (case when lv.version is null
             then coalesce(jsonb_path_query_array(f.draft_model, '$.interfaces.mcp[*].toolName'), '[]'::jsonb)
             else ${summaryToolNames('lv.summary')} end) as "toolNames",
           f.live_version as "liveVersion", f.latest_version as "latestVersion",
           (f.draft_literal is not null) as "hasDraft", f.is_public as "isPublic", null::text as "installationId",
           null::boolean as enabled, null::text as "sourceWorkspaceId", null::text as "versionPolicy",
           null::int as "pinnedVersion", null::jsonb as "slotBindings", null::int as version,
           f.trust_metadata as "optedIn",
           f.trusted_metadata_sha256 as "reviewedSha256",
           ${pinMatches('f.trusted_metadata_sha256', 'lv.metadata_sha256')} as "pinMatches",
           o.rank, lower(f.slug) as key, 0 as grp, f.slug as "sortId", '' as "sortSource", '' as "sortName"
    from (${own}) o
    join flows f on f.id = o."flowId" and f.workspace_id = ${WORKSPACE}
    left join flow_versions lv on lv.flow_id = f.id and lv.workspace_id = ${WORKSPACE}
      and lv.version = f.live_version`;
  const installedRows = sql`
    select sf.id as "flowId", sf.slug as "flowSlug", v.summary->>'name' as name,
           v.summary->>'description' as description, v.summary->'tags' as tags,
           ${summaryToolNames('v.summary')} as "toolNames", null::int as "liveVersion", null::int as "latestVersion",
           false as "hasDraft", true as "isPublic", i.id as "installationId", i.enabled,
           i.source_workspace_id as "sourceWorkspaceId", i.version_policy as "versionPolicy",
           i.pinned_version as "pinnedVersion", i.slot_bindings as "slotBindings", v.version,
           i.trust_metadata as "optedIn",
           i.trusted_metadata_sha256 as "reviewedSha256",
           ${pinMatches('i.trusted_metadata_sha256', 'v.metadata_sha256')} as "pinMatches",
           ${rankSql(q, false, sql.raw('sf.slug'), sql.raw(`(v.summary->>'searchText')`))} as rank,
           lower(sf.slug) as key, 1 as grp, i.id as "sortId", '' as "sortSource", '' as "sortName"
    from ${INSTALLED_VERSIONS}
    where i.workspace_id = ${WORKSPACE} and ${WITH_INSTALLATIONS}`;

  return mergedPage(ownRows, installedRows, after && { ...after, source: '', name: '' }, PAGE_ROWS);
}

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
  const key = `flows|${termsShape(q)}|${after ? `${after.rank}${after.group}` : '-'}`;
  const c = compiledFor(key, () => flowStatement(q, after));
  const values = searchValues(workspaceId, q, limit + 1, after && { ...after, source: '', name: '' });
  values.inst = options.includeInstallations !== false;
  const rows = await db.statements.prepared<FlowRow>(bind(c, values));
  const next = nextPosition(rows, limit);
  return {
    items: rows.slice(0, limit).map((r) => ({
      origin: r.grp === 0 ? 'workspace' : 'installation',
      flowId: r.flowId,
      flowSlug: r.flowSlug,
      name: r.name,
      description: r.description,
      tags: r.tags ?? [],
      toolNames: r.toolNames ?? [],
      liveVersion: r.liveVersion,
      latestVersion: r.latestVersion,
      hasDraft: r.hasDraft,
      isPublic: r.isPublic,
      trust: {
        optedIn: r.optedIn === true,
        reviewedSha256: r.reviewedSha256,
        pinMatches: r.pinMatches === true,
      },
      installationId: r.installationId,
      enabled: r.enabled,
      sourceWorkspaceId: r.sourceWorkspaceId,
      versionPolicy: r.versionPolicy,
      pinnedVersion: r.pinnedVersion,
      slotBindings: r.slotBindings,
      version: r.version,
      rank: r.rank,
    })),
    next: next && { rank: next.rank, key: next.key, group: next.group, id: next.id },
  };
}
