import { utf8Length } from '@flowgate/core';
import { RunError } from './errors.js';
import type { Meter } from './limits.js';
import { redactJson, redactText } from './redact.js';
import { type JsonValue, Keyword, toJson, toText, type Value, VMap } from './values.js';

/**
 * A run result as it is stored and served (packages/run-engine/README.md): one MIME type, the full redacted content,
 * and a preview.
 *
 * - A top-level viewer envelope `{:flowgate.viewer/kind K :flowgate.viewer/value V}` is unwrapped: `:html` →
 *   text/html, `:markdown` → text/markdown, `:text` → text/plain (V as text), `:json` → application/json (V as JSON).
 * - `{:flowgate.viewer/mime-type "text/csv" :flowgate.viewer/value "…"}` keeps an explicit textual MIME type   (text/*,
 *   application/json, application/xml, application/yaml, and +json/+xml types) when V is a string.
 * - Anything else — an unknown kind, a non-textual MIME type, a plain value — is served as application/json.
 */
export interface RenderedResult {
  mimeType: string;
  /** The full content, redacted. */
  text: string;
  /** The redacted JSON value, when `mimeType` is application/json. */
  json?: JsonValue;
  /** UTF-8 size of `text`. */
  bytes: number;
  /** The first `previewChars` characters of `text`. */
  preview: string;
  previewTruncated: boolean;
}

export interface RenderOptions {
  meter: Meter;
  knownSecrets: readonly string[];
  /** Larger results fail with `result_too_large`. */
  maxBytes: number;
  previewChars?: number;
}

export const DEFAULT_PREVIEW_CHARS = 2000;

export const VIEWER_KIND = 'flowgate.viewer/kind';
export const VIEWER_VALUE = 'flowgate.viewer/value';
export const VIEWER_MIME_TYPE = 'flowgate.viewer/mime-type';

const KIND_MIME: Readonly<Record<string, string>> = {
  html: 'text/html',
  markdown: 'text/markdown',
  text: 'text/plain',
  json: 'application/json',
};

const TEXTUAL_MIME = /^(text\/[a-z0-9.+-]+|application\/(json|xml|yaml|x-yaml|[a-z0-9.-]+\+(json|xml)))$/;

/** The bare `type/subtype` of a textual MIME type (parameters dropped, lower-cased), or undefined. */
export function textualMimeType(value: string): string | undefined {
  const base = value.split(';')[0]?.trim().toLowerCase() ?? '';
  return TEXTUAL_MIME.test(base) ? base : undefined;
}

function utf8Bytes(s: string): number {
  return utf8Length(s);
}

interface Unwrapped {
  mimeType: string;
  value: Value;
}

function unwrap(value: Value, meter: Meter): Unwrapped | undefined {
  if (!(value instanceof VMap)) return undefined;
  const inner = value.entry(new Keyword(VIEWER_VALUE), meter);
  if (!inner) return undefined;
  const mime = value.get(new Keyword(VIEWER_MIME_TYPE), meter);
  if (typeof mime === 'string' && typeof inner[1] === 'string') {
    const textual = textualMimeType(mime);
    if (textual) return { mimeType: textual, value: inner[1] };
  }
  const kind = value.get(new Keyword(VIEWER_KIND), meter);
  const kindName = kind instanceof Keyword ? kind.name : typeof kind === 'string' ? kind : undefined;
  const mimeType = kindName === undefined ? undefined : KIND_MIME[kindName];
  return mimeType ? { mimeType, value: inner[1] } : undefined;
}

export function renderResult(value: Value, options: RenderOptions): RenderedResult {
  const { meter, knownSecrets, maxBytes } = options;
  const budget = { maxBytes, what: 'the run result' };
  const unwrapped = unwrap(value, meter);
  let mimeType: string;
  let text: string;
  let json: JsonValue | undefined;
  if (unwrapped && unwrapped.mimeType !== 'application/json') {
    mimeType = unwrapped.mimeType;
    // Checked against the budget before redaction: redaction only ever shortens secrets to a marker of similar size.
    toJson(unwrapped.value, meter, budget);
    text = redactText(toText(unwrapped.value, meter), knownSecrets);
  } else {
    mimeType = 'application/json';
    json = redactJson(toJson(unwrapped ? unwrapped.value : value, meter, budget), knownSecrets);
    text = JSON.stringify(json);
  }
  const bytes = utf8Bytes(text);
  if (bytes > maxBytes)
    throw new RunError('result_too_large', `the run result is larger than ${maxBytes} bytes`);
  const previewChars = options.previewChars ?? DEFAULT_PREVIEW_CHARS;
  let cut = Math.min(previewChars, text.length);
  // Never split a surrogate pair.
  if (cut > 0 && cut < text.length && /[\uD800-\uDBFF]/.test(text[cut - 1] as string)) cut--;
  const out: RenderedResult = {
    mimeType,
    text,
    bytes,
    preview: text.slice(0, cut),
    previewTruncated: text.length > previewChars,
  };
  if (json !== undefined) out.json = json;
  return out;
}
