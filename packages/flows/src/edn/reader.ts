import { utf8Length } from '@flowgate/core';
import { parseEDNString } from 'edn-data';
import { type Diagnostic, type DiagnosticCode, diagnostic, joinPath } from '../diagnostics.js';
import { keySegment } from './path.js';
import {
  FLOAT_RE,
  INT_RE,
  isValidInst,
  isValidKeywordName,
  isValidSymbolName,
  LONE_SURROGATE_RE,
  NAMED_CHARS,
  UUID_RE,
} from './syntax.js';
import type { EdnMap, EdnMapEntry, EdnNode, EdnString, Loc } from './types.js';
import { compact } from './writer.js';

/**
 * Strict EDN reader producing a positioned, lossless tree.
 *
 * edn-data's own structural parser accepts malformed input (`{:bad ]`), drops `'(…)` and rounds big integers, so
 * the structure, positions and every rule below are enforced here by a recursive-descent reader. edn-data keeps one
 * job on this side: decoding string literals, once this reader has checked the literal's escapes (and it encodes
 * atoms on the writing side, see writer.ts).
 *
 * Rules beyond the EDN grammar, each reported as a positioned diagnostic, never thrown:
 * - input ≤ 150 KB (UTF-8), one top-level form, nesting ≤ 64 levels, at most 50 diagnostics;
 * - no NUL or other control characters (tab, CR and LF aside), no lone surrogates, no `\u0000` escape;
 * - integers within ±(2^53−1), floats finite, `M` decimals with ≤ 15 significant digits (JSON numbers are doubles);
 * - tags: `#inst`, `#uuid`, `#{…}` sets and `#_` discard only;
 * - a quote (`'`) only directly before the top-level `:flow` value, which must then be a list: `'(…)` reads as the
 *   list itself (accepted for compatibility). Anywhere else it is an error, so nothing is silently dropped;
 * - no duplicate map keys or set elements (compared on their canonical text).
 */
export const MAX_DEFINITION_BYTES = 150 * 1024;
export const MAX_DEPTH = 64;
export const MAX_DIAGNOSTICS = 50;

export type ReadResult =
  | { ok: true; value: EdnNode; diagnostics: Diagnostic[] }
  | { ok: false; value?: undefined; diagnostics: Diagnostic[] };

export function readEdn(text: string): ReadResult {
  const reader = new Reader(text);
  try {
    const value = reader.readDocument();
    if (reader.diagnostics.length === 0 && value !== undefined) return { ok: true, value, diagnostics: [] };
  } catch (error) {
    if (!(error instanceof Fatal)) {
      // A reader bug must not escape as an exception: report it as a syntax problem instead.
      reader.diagnostics.push(
        diagnostic(
          'error',
          'edn_syntax_invalid',
          'the definition could not be read',
          '',
          null,
          'check the EDN syntax',
        ),
      );
    }
  }
  return { ok: false, diagnostics: reader.diagnostics };
}

class Fatal extends Error {}

/** Index of the first C0 control character other than tab, LF and CR (or DEL), or -1. */
function firstControlCharacter(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 9 && c !== 10 && c !== 13) || c === 0x7f) return i;
  }
  return -1;
}

interface Close {
  marker: 'close';
  char: string;
  loc: Loc;
}
interface Eof {
  marker: 'eof';
}
type Read = EdnNode | Close | Eof;

const EOF: Eof = { marker: 'eof' };

function isMarker(r: Read): r is Close | Eof {
  return 'marker' in r;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r', ',']);
const TERMINATORS = new Set([' ', '\t', '\n', '\r', ',', '(', ')', '[', ']', '{', '}', '"', ';']);
const CLOSER: Readonly<Record<string, string>> = { '(': ')', '[': ']', '{': '}', '#{': '}' };
const SIMPLE_ESCAPES = new Map([
  ['t', '\t'],
  ['r', '\r'],
  ['n', '\n'],
  ['b', '\b'],
  ['f', '\f'],
  ['\\', '\\'],
  ['"', '"'],
]);
const NAMED = new Map(Object.entries(NAMED_CHARS));
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const PLACEHOLDER: EdnNode = { kind: 'nil' };

const OUT_OF_RANGE_HINT =
  'numbers must fit a JSON double exactly: integers within ±9007199254740991; write larger values as strings';

class Reader {
  readonly diagnostics: Diagnostic[] = [];
  private pos = 0;
  private line = 1;
  private col = 1;
  private readonly path: string[] = [];

  constructor(private readonly src: string) {}

  readDocument(): EdnNode | undefined {
    const src = this.src;
    // UTF-16 length ≤ UTF-8 length, so a long string is refused without measuring all of it.
    const bytes = src.length > 4 * MAX_DEFINITION_BYTES ? undefined : utf8Length(src);
    if (bytes === undefined || bytes > MAX_DEFINITION_BYTES) {
      this.fail(
        'definition_too_large',
        `the definition is ${bytes ?? `more than ${4 * MAX_DEFINITION_BYTES}`} bytes; the limit is ${MAX_DEFINITION_BYTES} bytes (150 KB)`,
        null,
        'split large data out of the definition (fetch it with an :http step) or shorten it',
      );
    }
    this.checkCharacters();
    if (src.charCodeAt(0) === 0xfeff) this.pos = 1; // a leading byte-order mark is not content
    const first = this.readForm(0, false);
    if (isMarker(first)) {
      if (first.marker === 'close') this.unexpectedCloser(first);
      this.fail(
        'edn_empty_input',
        'the definition is empty',
        null,
        'a flow definition is one EDN map: {:slug :my-flow …}',
      );
    }
    this.skipWhitespace();
    if (this.pos < src.length) {
      const ch = src[this.pos] as string;
      const loc = this.here();
      if (ch === ')' || ch === ']' || ch === '}') {
        this.unexpectedCloser({ marker: 'close', char: ch, loc });
      }
      // Only discards (#_) may follow the definition; anything else is reported without reading it.
      if (!src.startsWith('#_', this.pos)) this.multipleForms(loc);
      const second = this.readForm(0, false);
      if (!isMarker(second)) this.multipleForms(second.loc ?? loc);
      if (second.marker === 'close') this.unexpectedCloser(second);
    }
    return first;
  }

  // ---- positions and diagnostics -------------------------------------------------------------------------------

  private here(): Loc {
    return { line: this.line, column: this.col, offset: this.pos };
  }

  /** Consumes one code point, tracking line and column (CRLF counts as one line break). */
  private advance(): void {
    const c = this.src.charCodeAt(this.pos);
    if (c === 10) {
      this.line++;
      this.col = 1;
      this.pos++;
    } else if (c === 13) {
      this.pos++;
      if (this.src.charCodeAt(this.pos) !== 10) {
        this.line++;
        this.col = 1;
      }
    } else if (c >= 0xd800 && c <= 0xdbff) {
      this.pos += 2; // lone surrogates were rejected up front, so a pair follows
      this.col++;
    } else {
      this.pos++;
      this.col++;
    }
  }

  private report(code: DiagnosticCode, message: string, loc: Loc | null, hint: string): void {
    this.diagnostics.push(diagnostic('error', code, message, joinPath(this.path), loc, hint));
    if (this.diagnostics.length >= MAX_DIAGNOSTICS) throw new Fatal();
  }

  private fail(code: DiagnosticCode, message: string, loc: Loc | null, hint: string): never {
    this.diagnostics.push(diagnostic('error', code, message, joinPath(this.path), loc, hint));
    throw new Fatal();
  }

  private multipleForms(at: Loc): never {
    this.fail(
      'edn_multiple_forms',
      'the definition has more than one top-level form',
      at,
      'a flow definition is exactly one EDN map; remove or merge what follows it',
    );
  }

  private unexpectedCloser(close: Close): never {
    this.fail(
      'edn_unbalanced_delimiter',
      `unexpected \`${close.char}\` with nothing open to close`,
      close.loc,
      'remove the extra closing delimiter or add the missing opening one',
    );
  }

  private locAt(index: number): Loc {
    let line = 1;
    let column = 1;
    for (let i = 0; i < index; i++) {
      const c = this.src.charCodeAt(i);
      if (c === 10) {
        line++;
        column = 1;
      } else if (c === 13) {
        if (this.src.charCodeAt(i + 1) !== 10) {
          line++;
          column = 1;
        }
      } else if (!(c >= 0xdc00 && c <= 0xdfff && i > 0 && this.src.charCodeAt(i - 1) >= 0xd800)) {
        column++;
      }
    }
    return { line, column, offset: index };
  }

  /** NUL, other control characters and lone surrogates are refused anywhere, strings and comments included. */
  private checkCharacters(): void {
    const control = firstControlCharacter(this.src);
    if (control >= 0) {
      const code = this.src.charCodeAt(control);
      this.fail(
        'edn_invalid_character',
        `control character U+${code.toString(16).toUpperCase().padStart(4, '0')} is not allowed`,
        this.locAt(control),
        'remove the character; inside strings write escapes such as \\n or \\t',
      );
    }
    const lone = LONE_SURROGATE_RE.exec(this.src);
    if (lone) {
      this.fail(
        'edn_invalid_character',
        'the text contains an unpaired UTF-16 surrogate',
        this.locAt(lone.index),
        'the definition must be valid Unicode text',
      );
    }
  }

  private skipWhitespace(): void {
    const src = this.src;
    while (this.pos < src.length) {
      const ch = src[this.pos] as string;
      if (WHITESPACE.has(ch)) this.advance();
      else if (ch === ';') {
        while (this.pos < src.length && src.charCodeAt(this.pos) !== 10 && src.charCodeAt(this.pos) !== 13) {
          this.advance();
        }
      } else return;
    }
  }

  private tooDeep(loc: Loc): never {
    this.fail(
      'edn_too_deep',
      `nesting deeper than ${MAX_DEPTH} levels`,
      loc,
      'flatten the structure; move deep data into a step result',
    );
  }

  // ---- forms -----------------------------------------------------------------------------------------------------

  /**
   * Reads the next form at nesting `depth`. `quoteOk` is true only for the value of the top-level `:flow` key.
   * Returns a marker at a closing delimiter (not consumed) or the end of input.
   */
  private readForm(depth: number, quoteOk: boolean): Read {
    const src = this.src;
    for (;;) {
      this.skipWhitespace();
      if (this.pos >= src.length) return EOF;
      const loc = this.here();
      const ch = src[this.pos] as string;
      switch (ch) {
        case '(':
          return this.readCollection('list', '(', depth, loc);
        case '[':
          return this.readCollection('vector', '[', depth, loc);
        case '{':
          return this.readCollection('map', '{', depth, loc);
        case ')':
        case ']':
        case '}':
          return { marker: 'close', char: ch, loc };
        case '"':
          return this.readString();
        case '\\':
          return this.readChar();
        case "'":
          return this.readQuote(depth, quoteOk, loc);
        case '`':
        case '~':
        case '@':
        case '^':
          this.fail(
            'edn_unsupported_syntax',
            `\`${ch}\` (a Clojure reader macro) is not EDN`,
            loc,
            ch === '^'
              ? 'metadata is not supported; remove it'
              : 'write the form out in full, e.g. (quote x) or a plain value',
          );
          break;
        case '#': {
          const next = src[this.pos + 1];
          if (next === '_') {
            if (depth >= MAX_DEPTH) this.tooDeep(loc);
            this.advance();
            this.advance();
            const discarded = this.readForm(depth + 1, false);
            if (isMarker(discarded)) {
              this.fail(
                'edn_syntax_invalid',
                '`#_` must be followed by a form to discard',
                loc,
                'remove the `#_`',
              );
            }
            continue;
          }
          if (next === '{') return this.readCollection('set', '#{', depth, loc);
          return this.readTagged(depth, loc);
        }
        default:
          return this.readAtom(loc);
      }
    }
  }

  private readCollection(
    kind: 'list' | 'vector' | 'map' | 'set',
    open: string,
    depth: number,
    loc: Loc,
  ): EdnNode {
    if (depth >= MAX_DEPTH) this.tooDeep(loc);
    for (let i = 0; i < open.length; i++) this.advance();
    const closer = CLOSER[open] as string;
    const items: EdnNode[] = [];
    const topLevelMap = kind === 'map' && depth === 0;
    for (;;) {
      let segment: string | undefined;
      let quoteOk = false;
      if (kind === 'map') {
        const key = items.length % 2 === 1 ? items[items.length - 1] : undefined;
        if (key) {
          segment = keySegment(key);
          quoteOk = topLevelMap && key.kind === 'keyword' && key.name === 'flow';
        }
      } else {
        segment = String(items.length);
      }
      if (segment !== undefined) this.path.push(segment);
      const item = this.readForm(depth + 1, quoteOk);
      if (segment !== undefined) this.path.pop();
      if (isMarker(item)) {
        if (item.marker === 'eof') {
          this.fail(
            'edn_unbalanced_delimiter',
            `\`${open}\` opened at line ${loc.line}, column ${loc.column} is never closed`,
            loc,
            `add the missing \`${closer}\``,
          );
        }
        if (item.char !== closer) {
          this.fail(
            'edn_mismatched_delimiter',
            `expected \`${closer}\` to close \`${open}\` from line ${loc.line}, column ${loc.column}, found \`${item.char}\``,
            item.loc,
            `close the \`${open}\` with \`${closer}\` first`,
          );
        }
        this.advance();
        break;
      }
      items.push(item);
    }
    if (kind === 'map') return this.buildMap(items, loc);
    if (kind === 'set') this.checkSet(items);
    return { kind, items, loc };
  }

  private buildMap(items: EdnNode[], loc: Loc): EdnMap {
    if (items.length % 2 === 1) {
      const key = items[items.length - 1] as EdnNode;
      this.report(
        'edn_odd_map_entries',
        `map key ${keySegment(key)} has no value (a map needs an even number of forms)`,
        key.loc ?? loc,
        'add the missing value or remove the key',
      );
    }
    const entries: EdnMapEntry[] = [];
    const seen = new Map<string, Loc | undefined>();
    for (let i = 0; i + 1 < items.length; i += 2) {
      const key = items[i] as EdnNode;
      const id = compact(key);
      const first = seen.get(id);
      if (seen.has(id)) {
        this.report(
          'edn_duplicate_key',
          `duplicate map key ${keySegment(key)}${first ? ` (first at line ${first.line}, column ${first.column})` : ''}`,
          key.loc ?? loc,
          'each key may appear once in a map; remove or rename one of them',
        );
      } else seen.set(id, key.loc);
      entries.push({ key, value: items[i + 1] as EdnNode });
    }
    return { kind: 'map', entries, loc };
  }

  private checkSet(items: EdnNode[]): void {
    const seen = new Set<string>();
    for (const item of items) {
      const id = compact(item);
      if (seen.has(id)) {
        this.report(
          'edn_duplicate_set_element',
          `duplicate set element ${id.length > 40 ? `${id.slice(0, 39)}…` : id}`,
          item.loc ?? null,
          'each element may appear once in a set',
        );
      }
      seen.add(id);
    }
  }

  private readString(): EdnString {
    const src = this.src;
    const loc = this.here();
    const start = this.pos;
    this.advance();
    for (;;) {
      if (this.pos >= src.length) {
        this.fail('edn_unterminated_string', 'string is never closed', loc, 'add the closing `"`');
      }
      const c = src.charCodeAt(this.pos);
      if (c === 34) {
        this.advance();
        break;
      }
      if (c === 92) this.checkEscape();
      else this.advance();
    }
    const literal = src.slice(start, this.pos);
    const value = parseEDNString(literal);
    if (typeof value !== 'string') {
      this.fail('edn_syntax_invalid', 'string literal could not be decoded', loc, 'check the string escapes');
    }
    return { kind: 'string', value, loc };
  }

  /** Validates one escape sequence (cursor on the backslash) so that edn-data decodes only well-formed literals. */
  private checkEscape(): void {
    const src = this.src;
    const loc = this.here();
    this.advance();
    const e = src[this.pos];
    if (e === undefined) return; // the caller reports the unterminated string
    if (SIMPLE_ESCAPES.has(e)) {
      this.advance();
      return;
    }
    const badEscape = (message: string): never =>
      this.fail('edn_invalid_escape', message, loc, 'valid escapes: \\" \\\\ \\n \\t \\r \\b \\f \\uXXXX');
    if (e !== 'u') badEscape(`\`\\${e}\` is not a string escape`);
    const hex = src.slice(this.pos + 1, this.pos + 5);
    if (!/^[0-9a-fA-F]{4}$/.test(hex)) badEscape('`\\u` must be followed by four hex digits');
    for (let i = 0; i < 5; i++) this.advance();
    const code = Number.parseInt(hex, 16);
    if (code === 0) badEscape('`\\u0000` (NUL) is not allowed in strings');
    if (code >= 0xdc00 && code <= 0xdfff) badEscape(`\`\\u${hex}\` is an unpaired low surrogate`);
    if (code >= 0xd800 && code <= 0xdbff) {
      const low = src.slice(this.pos, this.pos + 6);
      if (!/^\\u[dD][c-fC-F][0-9a-fA-F]{2}$/.test(low))
        badEscape(`\`\\u${hex}\` is an unpaired high surrogate`);
      for (let i = 0; i < 6; i++) this.advance();
    }
  }

  private readChar(): EdnNode {
    const src = this.src;
    const loc = this.here();
    this.advance();
    const first = src[this.pos];
    if (first === undefined || WHITESPACE.has(first)) {
      this.fail(
        'edn_invalid_token',
        'a backslash must be followed by a character',
        loc,
        'write a character like \\a or \\newline, or use a string',
      );
    }
    const start = this.pos;
    this.advance(); // the first character is taken as is, so \( and \" are characters
    while (this.pos < src.length && !TERMINATORS.has(src[this.pos] as string)) this.advance();
    const text = src.slice(start, this.pos);
    const named = NAMED.get(text);
    if ([...text].length === 1) return { kind: 'char', value: text, loc };
    if (named !== undefined) return { kind: 'char', value: named, loc };
    const unicode = /^u([0-9a-fA-F]{4})$/.exec(text);
    if (unicode) {
      const code = Number.parseInt(unicode[1] as string, 16);
      if (code !== 0 && (code < 0xd800 || code > 0xdfff))
        return { kind: 'char', value: String.fromCharCode(code), loc };
    }
    this.report(
      'edn_invalid_token',
      `\`\\${text}\` is not a character literal`,
      loc,
      'characters are \\a, \\newline, \\space, \\tab, \\return or \\uXXXX; for text use a string "…"',
    );
    return PLACEHOLDER;
  }

  private readQuote(depth: number, quoteOk: boolean, loc: Loc): EdnNode {
    if (depth >= MAX_DEPTH) this.tooDeep(loc);
    this.advance();
    this.skipWhitespace();
    const next = this.src[this.pos];
    if (next === undefined || next === ')' || next === ']' || next === '}') {
      this.fail('edn_syntax_invalid', 'a quote must be followed by a form', loc, "remove the lone `'`");
    }
    if (!quoteOk) {
      // Reported before the quoted form is read, so a chain of quotes is reported in order and stays bounded.
      this.report(
        'edn_quote_not_allowed',
        "a quote (') is only accepted directly before the :flow body",
        loc,
        "remove the `'`; if you need a literal list write (quote …) inside the :flow body",
      );
    }
    const form = this.readForm(depth + 1, false);
    if (isMarker(form)) {
      this.fail('edn_syntax_invalid', 'a quote must be followed by a form', loc, "remove the lone `'`");
    }
    if (quoteOk && form.kind !== 'list') {
      this.report(
        'edn_quote_not_allowed',
        'only a list may be quoted as the :flow body',
        loc,
        "remove the `'`",
      );
    }
    return form;
  }

  private readTagged(depth: number, loc: Loc): EdnNode {
    if (depth >= MAX_DEPTH) this.tooDeep(loc);
    const src = this.src;
    this.advance(); // '#'
    const next = src[this.pos];
    const startsTag = next !== undefined && (next === '#' || /\p{L}/u.test(next));
    if (!startsTag) {
      this.fail(
        'edn_unsupported_syntax',
        `\`#${next === undefined || WHITESPACE.has(next) ? '' : next}\` is not EDN`,
        loc,
        'only #inst "…", #uuid "…", #{…} sets and #_ are accepted',
      );
    }
    const start = this.pos;
    while (this.pos < src.length && !TERMINATORS.has(src[this.pos] as string)) this.advance();
    const tag = src.slice(start, this.pos);
    if (tag !== 'inst' && tag !== 'uuid') {
      this.report(
        'edn_unknown_tag',
        `unknown tag #${tag}`,
        loc,
        tag.startsWith('#')
          ? '##Inf, ##-Inf and ##NaN are not JSON numbers; use a string or nil'
          : 'only #inst and #uuid tags are readable',
      );
      if (!tag.startsWith('#')) {
        const dropped = this.readForm(depth + 1, false);
        if (isMarker(dropped))
          this.fail('edn_syntax_invalid', `#${tag} must be followed by a value`, loc, 'remove the tag');
      }
      return PLACEHOLDER;
    }
    const value = this.readForm(depth + 1, false);
    if (isMarker(value))
      this.fail('edn_syntax_invalid', `#${tag} must be followed by a string`, loc, `write #${tag} "…"`);
    if (value.kind !== 'string' || !(tag === 'inst' ? isValidInst(value.value) : UUID_RE.test(value.value))) {
      this.report(
        'edn_invalid_tag_value',
        tag === 'inst' ? '#inst needs an RFC 3339 timestamp string' : '#uuid needs a canonical UUID string',
        value.loc ?? loc,
        tag === 'inst'
          ? 'e.g. #inst "2026-01-31T12:00:00Z"'
          : 'e.g. #uuid "3b8e2f52-8a1d-4d3c-9f7e-2a6b1c0d4e5f"',
      );
      return PLACEHOLDER;
    }
    return { kind: 'tagged', tag, value, loc };
  }

  private readAtom(loc: Loc): EdnNode {
    const src = this.src;
    const start = this.pos;
    while (this.pos < src.length && !TERMINATORS.has(src[this.pos] as string)) this.advance();
    const text = src.slice(start, this.pos);
    const c0 = text.charCodeAt(0);
    const c1 = text.charCodeAt(1);
    const isDigit = (c: number) => c >= 48 && c <= 57;
    if (isDigit(c0) || ((c0 === 43 || c0 === 45) && isDigit(c1))) return this.readNumber(text, loc);
    if (c0 === 58) {
      const name = text.slice(1);
      if (isValidKeywordName(name)) return { kind: 'keyword', name, loc };
      this.report(
        'edn_invalid_token',
        `\`${text}\` is not a valid keyword`,
        loc,
        name.startsWith(':')
          ? 'auto-resolved keywords (::k) are not EDN; write :k or :ns/k'
          : 'keywords look like :name or :ns/name',
      );
      return PLACEHOLDER;
    }
    if (text === 'nil') return { kind: 'nil', loc };
    if (text === 'true' || text === 'false') return { kind: 'boolean', value: text === 'true', loc };
    if (isValidSymbolName(text)) return { kind: 'symbol', name: text, loc };
    this.report(
      'edn_invalid_token',
      `\`${text.length > 40 ? `${text.slice(0, 39)}…` : text}\` is not a valid symbol`,
      loc,
      'symbols contain letters, digits and * + ! - _ ? $ % & = < > . : # / ; quotes, @, ~ and ^ are not EDN',
    );
    return PLACEHOLDER;
  }

  private readNumber(text: string, loc: Loc): EdnNode {
    const int = INT_RE.exec(text);
    if (int) {
      const sign = int[1] ?? '';
      const digits = int[2] ?? '';
      if (digits.length > 16 || (digits.length === 16 && BigInt(digits) > MAX_SAFE)) {
        this.report(
          'edn_number_out_of_range',
          `integer ${text} is outside ±(2^53−1)`,
          loc,
          OUT_OF_RANGE_HINT,
        );
        return PLACEHOLDER;
      }
      const value = Number(`${sign}${digits}`);
      return { kind: 'int', value: value === 0 ? 0 : value, loc };
    }
    if (FLOAT_RE.test(text)) {
      const decimal = text.endsWith('M');
      const body = decimal ? text.slice(0, -1) : text;
      const mantissa = (body.split(/[eE]/)[0] as string).replace(/^[+-]/, '').replace('.', '');
      const significant = mantissa.replace(/^0+/, '').replace(/0+$/, '');
      const value = Number(body);
      if (decimal && significant.length > 15) {
        this.report(
          'edn_number_out_of_range',
          `decimal ${text} has more than 15 significant digits and would lose precision`,
          loc,
          'write exact decimals as strings',
        );
        return PLACEHOLDER;
      }
      if (!Number.isFinite(value) || (value === 0 && significant.length > 0)) {
        this.report(
          'edn_number_out_of_range',
          `number ${text} is outside the range of a double`,
          loc,
          OUT_OF_RANGE_HINT,
        );
        return PLACEHOLDER;
      }
      return { kind: 'float', value, loc };
    }
    let hint = 'numbers look like 42, -7, 3.14, 1e-3';
    if (text.includes('/')) hint = 'ratios are not supported; write a decimal such as 0.5';
    else if (/^[+-]?0[xX]/.test(text))
      hint = 'hexadecimal literals are not supported; write a decimal integer';
    else if (/^[+-]?0[0-9]/.test(text))
      hint = 'leading zeros are not allowed; write 7, not 007, or use a string';
    else if (/^[+-]?[0-9]+[rR]/.test(text))
      hint = 'radix literals are not supported; write a decimal integer';
    this.report(
      'edn_invalid_number',
      `\`${text.length > 40 ? `${text.slice(0, 39)}…` : text}\` is not a valid number`,
      loc,
      hint,
    );
    return PLACEHOLDER;
  }
}
