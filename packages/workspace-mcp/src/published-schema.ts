/**
 * How JSON Schemas are published in tools/list. Every byte of tools/list is context an agent pays for before its
 * first call (token-budget.ts), so the published schemas say what a client needs and nothing the server already
 * enforces with zod. Input schemas keep every constraint an agent must meet; output schemas describe the success
 * shape loosely enough that every `structuredContent` the server sends (success and tool-error) validates: SDK v1
 * clients validate it against the output schema even when `isError` is set.
 */

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Marks an argument whose value an agent only ever copies from an answer (a cursor, a run or installation id, a
 * resource URI): its length bounds and pattern are the server's defence against forged values, which zod enforces,
 * and say nothing to an agent that pastes what it was given, so the published schema leaves them out.
 */
export const OPAQUE_ARG = 'x-flowgate-opaque';

/**
 * Input schema: drop `default`s an agent gains nothing from (false, 0, {}: omitting the argument already means "off",
 * "none" or "empty"). Meaningful defaults (a page size, `true`) stay. Opaque arguments (OPAQUE_ARG) lose their
 * bounds and pattern.
 */
export function publishInputSchema(schema: Json): Json {
  return mapSchema(schema, (found) => {
    let node = found;
    if (node[OPAQUE_ARG] === true) {
      const { [OPAQUE_ARG]: _m, minLength: _a, maxLength: _b, pattern: _p, ...rest } = node;
      node = rest;
    }
    if (!('default' in node)) return node;
    const d = node.default;
    const trivial = d === false || d === 0 || (isObject(d) && Object.keys(d).length === 0);
    if (!trivial) return node;
    const { default: _drop, ...rest } = node;
    return rest;
  });
}

/**
 * Output schema: the success shape as types, properties, enums and array items. Left out: descriptions,
 * `additionalProperties: false` and `required` (the server checks its own output with zod before sending; a client
 * only needs to know what may be there), `propertyNames` of string-keyed records (every JSON key is a string).
 * Nullable members collapse to `type: [t, "null"]`, and a union of objects (a discriminated union) to one object
 * with every member's properties and the discriminator's values as an enum. The root has no `required` and allows
 * other properties, so a tool-error `{error, details}` validates too; it stays `type: "object"` as MCP requires.
 */
export function publishOutputSchema(schema: Json): Json {
  const compact = mapSchema(schema, (node) => dropLongEnums(compactOutputNode(node)));
  return { ...mapSchema(compact, dropImpliedType), type: 'object' };
}

/**
 * `type: "object"` beside `properties` and `type: "array"` beside `items` say nothing a reader does not see already;
 * a nullable type (`["object", "null"]`) stays, it says more.
 */
function dropImpliedType(node: Json): Json {
  if (
    (node.type === 'object' && isObject(node.properties)) ||
    (node.type === 'array' && node.items !== undefined)
  ) {
    const { type: _implied, ...rest } = node;
    return rest;
  }
  return node;
}

/**
 * Enums in output schemas (statuses, capability and toolset names, trust decisions) are left to the results, tool
 * descriptions and docs that spell them out: what an output may contain is read from the answer itself. A schema
 * without the enum still accepts the output.
 */
function dropLongEnums(node: Json): Json {
  if (!Array.isArray(node.enum) || node.enum.length <= SHORT_ENUM_MAX) return node;
  const { enum: _long, ...rest } = node;
  return rest;
}

const SHORT_ENUM_MAX = 1;

function compactOutputNode(node: Json): Json {
  let out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'description' || k === 'title' || k === 'required' || k === 'examples' || k === 'default')
      continue;
    // `false` is the server's own strictness; `{}` (anything) is what an absent keyword means anyway.
    if (k === 'additionalProperties' && (v === false || (isObject(v) && Object.keys(v).length === 0)))
      continue;
    // z.int() emits the safe-integer range on every integer: a bound no JSON number from us comes near.
    if ((k === 'minimum' || k === 'maximum') && Math.abs(v as number) === Number.MAX_SAFE_INTEGER) continue;
    if (k === 'propertyNames' && isObject(v) && Object.keys(v).length === 1 && v.type === 'string') continue;
    out[k] = v;
  }
  const union = (out.anyOf ?? out.oneOf) as Json[] | undefined;
  if (Array.isArray(union)) {
    const merged = mergeUnion(union);
    if (merged) {
      const { anyOf: _a, oneOf: _o, ...rest } = out;
      // The discriminator's values gathered from the members are an enum like any other (dropLongEnums).
      if (isObject(merged.properties))
        merged.properties = Object.fromEntries(
          Object.entries(merged.properties).map(([k, v]) => [k, isObject(v) ? dropLongEnums(v) : v]),
        );
      out = dropLongEnums({ ...rest, ...merged });
    }
  }
  return out;
}

/** A union as one schema, or undefined when it is not one of the two shapes that merge without loss of validity. */
function mergeUnion(members: Json[]): Json | undefined {
  const nonNull = members.filter((m) => !(m.type === 'null' && Object.keys(m).length === 1));
  // `X | null` with a single-typed X: `type: [t, "null"]` accepts exactly the same values.
  if (nonNull.length === 1 && members.length === 2) {
    const [m] = nonNull as [Json];
    if (typeof m.type === 'string' && m.enum === undefined && m.const === undefined)
      return { ...m, type: [m.type, 'null'] };
    return undefined;
  }
  // Objects only: one object whose properties are the union of the members' (each property's schemas must agree,
  // apart from `const`s, which become an enum). Accepts every member's values.
  if (
    nonNull.length !== members.length ||
    !members.every((m) => m.type === 'object' && isObject(m.properties))
  )
    return undefined;
  const properties: Json = {};
  for (const m of members) {
    for (const [name, sub] of Object.entries(m.properties as Json)) {
      if (!isObject(sub)) return undefined;
      const seen = properties[name];
      if (seen === undefined) {
        properties[name] = sub.const === undefined ? sub : { type: sub.type, enum: [sub.const] };
      } else if (
        isObject(seen) &&
        Array.isArray(seen.enum) &&
        sub.const !== undefined &&
        seen.type === sub.type
      ) {
        properties[name] = { ...seen, enum: [...(seen.enum as unknown[]), sub.const] };
      } else if (JSON.stringify(seen) !== JSON.stringify(sub)) {
        return undefined;
      }
    }
  }
  return { type: 'object', properties };
}

/** Applies `f` to every schema node, children first; `properties` maps are walked by value (their keys are names). */
function mapSchema(schema: Json, f: (node: Json) => Json): Json {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!isObject(node)) return node;
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) {
      if ((k === 'properties' || k === '$defs' || k === 'patternProperties') && isObject(v)) {
        out[k] = Object.fromEntries(Object.entries(v).map(([name, sub]) => [name, visit(sub)]));
      } else if (k === 'enum' || k === 'const' || k === 'default' || k === 'examples' || k === 'required') {
        out[k] = v;
      } else {
        out[k] = visit(v);
      }
    }
    return f(out);
  };
  return visit(schema) as Json;
}
