/**
 * The lossless EDN value tree. Nodes produced by the reader carry `loc` (where the form starts); trees built in
 * code may omit it. Equality and writing ignore `loc`.
 */
export interface Loc {
  line: number;
  column: number;
  offset: number;
}

interface Base {
  loc?: Loc;
}

export interface EdnNil extends Base {
  kind: 'nil';
}
export interface EdnBoolean extends Base {
  kind: 'boolean';
  value: boolean;
}
/** Always a safe integer (|n| ≤ 2^53−1): larger literals are rejected by the reader, never rounded. */
export interface EdnInt extends Base {
  kind: 'int';
  value: number;
}
/** A finite IEEE double (EDN floats; `M` decimals with at most 15 significant digits). */
export interface EdnFloat extends Base {
  kind: 'float';
  value: number;
}
export interface EdnString extends Base {
  kind: 'string';
  value: string;
}
export interface EdnChar extends Base {
  kind: 'char';
  value: string;
}
/** `name` is the text after the colon, namespace included: `:flowgate.viewer/kind` → `flowgate.viewer/kind`. */
export interface EdnKeyword extends Base {
  kind: 'keyword';
  name: string;
}
export interface EdnSymbol extends Base {
  kind: 'symbol';
  name: string;
}
export interface EdnList extends Base {
  kind: 'list';
  items: EdnNode[];
}
export interface EdnVector extends Base {
  kind: 'vector';
  items: EdnNode[];
}
export interface EdnSet extends Base {
  kind: 'set';
  items: EdnNode[];
}
export interface EdnMapEntry {
  key: EdnNode;
  value: EdnNode;
}
/** Entries in source order; keys are unique (the reader rejects duplicates). */
export interface EdnMap extends Base {
  kind: 'map';
  entries: EdnMapEntry[];
}
/** Only `#inst` (RFC 3339 string) and `#uuid` (canonical UUID string) are readable. */
export interface EdnTagged extends Base {
  kind: 'tagged';
  tag: 'inst' | 'uuid';
  value: EdnString;
}

export type EdnNode =
  | EdnNil
  | EdnBoolean
  | EdnInt
  | EdnFloat
  | EdnString
  | EdnChar
  | EdnKeyword
  | EdnSymbol
  | EdnList
  | EdnVector
  | EdnSet
  | EdnMap
  | EdnTagged;

export type EdnCollection = EdnList | EdnVector | EdnSet;

export function isKeyword(node: EdnNode | undefined, name?: string): node is EdnKeyword {
  return node !== undefined && node.kind === 'keyword' && (name === undefined || node.name === name);
}

export function isSymbol(node: EdnNode | undefined, name?: string): node is EdnSymbol {
  return node !== undefined && node.kind === 'symbol' && (name === undefined || node.name === name);
}

/** The value under keyword key `name` of a map node, if any. */
export function mapGet(map: EdnMap, name: string): EdnNode | undefined {
  for (const entry of map.entries) {
    if (entry.key.kind === 'keyword' && entry.key.name === name) return entry.value;
  }
  return undefined;
}

/** A copy of the tree without source locations (for equality and storage). */
export function stripLoc(node: EdnNode): EdnNode {
  switch (node.kind) {
    case 'list':
    case 'vector':
    case 'set':
      return { kind: node.kind, items: node.items.map(stripLoc) };
    case 'map':
      return {
        kind: 'map',
        entries: node.entries.map((e) => ({ key: stripLoc(e.key), value: stripLoc(e.value) })),
      };
    case 'tagged':
      return { kind: 'tagged', tag: node.tag, value: { kind: 'string', value: node.value.value } };
    case 'nil':
      return { kind: 'nil' };
    case 'keyword':
    case 'symbol':
      return { kind: node.kind, name: node.name };
    default: {
      const { loc: _loc, ...rest } = node;
      return rest;
    }
  }
}
