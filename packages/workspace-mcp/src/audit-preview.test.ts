import { REDACTED } from '@flowgate/secrets';
import { describe, expect, it, vi } from 'vitest';
import { AUDIT_PREVIEW_LIMITS, auditPreview, auditText, OMITTED, storableText } from './audit-preview.js';

/** The longest text a redaction call was given (redaction is not linear on hostile text, so it must stay bounded). */
const redaction = vi.hoisted(() => ({ longest: 0 }));
vi.mock('@flowgate/secrets', async (importOriginal) => {
  const { probeRedaction } = await import('./redaction-probe.js');
  return probeRedaction(await importOriginal<typeof import('@flowgate/secrets')>(), redaction);
});

const size = (v: unknown) => JSON.stringify(v).length;

describe('auditPreview', () => {
  it('keeps small arguments as they are, redacted', () => {
    expect(
      auditPreview({
        summary: 'hi',
        n: 3,
        ok: true,
        none: null,
        list: [1, 'two'],
        auth: { token: 'abcdefgh' },
      }),
    ).toEqual({ summary: 'hi', n: 3, ok: true, none: null, list: [1, 'two'], auth: { token: REDACTED } });
    expect(auditPreview(undefined)).toBeNull();
    expect(auditPreview('Bearer abcdefghijklmnop')).toBe(REDACTED);
  });

  it('cuts a megabyte argument to a marked preview within the size cap', () => {
    const out = auditPreview({
      summary: 'x '.repeat(500_000),
      blob: 'x'.repeat(1_000_000),
      area: 'docs',
    }) as {
      truncated: boolean;
      preview: { summary: string; blob: string; area: string };
    };
    expect(out.truncated).toBe(true);
    expect(out.preview.summary).toBe(`${'x '.repeat(AUDIT_PREVIEW_LIMITS.maxStringChars / 2)}…`);
    // One unbroken run could be a credential cut in half: none of it is kept.
    expect(out.preview.blob).toBe('…');
    expect(out.preview.area).toBe('docs');
    expect(size(out)).toBeLessThanOrEqual(AUDIT_PREVIEW_LIMITS.maxJsonChars);
  });

  it('bounds entries, depth and the total size', () => {
    const wide = auditPreview(Array.from({ length: 10_000 }, (_, i) => i)) as { preview: number[] };
    expect(wide.preview).toHaveLength(AUDIT_PREVIEW_LIMITS.maxEntries);
    const keys = auditPreview(Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]))) as {
      preview: Record<string, number>;
    };
    expect(Object.keys(keys.preview)).toHaveLength(AUDIT_PREVIEW_LIMITS.maxEntries);
    let deep: unknown = 'bottom';
    for (let i = 0; i < 10_000; i++) deep = [deep];
    const d = JSON.stringify(auditPreview(deep));
    expect(d).toContain(OMITTED);
    expect(d).not.toContain('bottom');
    // Many medium strings: the total budget, not the per-string cap, ends the preview.
    const many = auditPreview(Array.from({ length: 40 }, () => 'y'.repeat(900)));
    expect(size(many)).toBeLessThanOrEqual(AUDIT_PREVIEW_LIMITS.maxJsonChars);
    expect(many).toMatchObject({ truncated: true });
  });

  it('stays within the cap when redaction makes text longer', () => {
    const grows = Array.from({ length: 8 }, () => '?token=a'.repeat(120));
    const out = auditPreview(grows);
    expect(size(out)).toBeLessThanOrEqual(AUDIT_PREVIEW_LIMITS.maxJsonChars);
    expect(JSON.stringify(out)).not.toMatch(/token=a/);
  });

  it('hands redaction only a bounded preview of text that makes the redaction regexes slow', () => {
    // 300 KB of "a." costs the URL pattern tens of seconds when redacted whole.
    const hostile = 'a.'.repeat(150_000);
    redaction.longest = 0;
    const out = auditPreview({ summary: hostile, details: hostile });
    expect(out).toMatchObject({ truncated: true });
    expect(redaction.longest).toBeGreaterThan(0);
    expect(redaction.longest).toBeLessThanOrEqual(AUDIT_PREVIEW_LIMITS.maxStringChars + 1);
    redaction.longest = 0;
    auditText(hostile, 500);
    expect(redaction.longest).toBeLessThanOrEqual(501);
  });

  it('never keeps the start of a token cut at the limit', () => {
    const key = `fgk_key1_${'s'.repeat(40)}`;
    const at = AUDIT_PREVIEW_LIMITS.maxStringChars - 20;
    const text = `${'w '.repeat(at / 2)}${key} trailing words`;
    const out = auditPreview({ note: text }) as { preview: { note: string } };
    expect(out.preview.note.endsWith(' …')).toBe(true);
    expect(out.preview.note).not.toContain('fgk_');
    expect(out.preview.note).not.toContain('sss');
  });

  it('drops a private key whose end marker was cut off', () => {
    const pem = `-----BEGIN RSA PRIVATE KEY-----\n${'QUJD\n'.repeat(400)}-----END RSA PRIVATE KEY-----`;
    const out = auditPreview({ note: `see: ${pem}` }) as { preview: { note: string } };
    expect(out.preview.note).toBe('see: …');
  });

  it('omits values under keys too long to judge, and keeps a __proto__ key as data', () => {
    const long = `${'k'.repeat(200)}_password`;
    const out = auditPreview({ [long]: 'hunter2hunter2', ok: 1 }) as { preview: Record<string, unknown> };
    expect(JSON.stringify(out)).not.toContain('hunter2');
    expect(out.preview.ok).toBe(1);
    const proto = auditPreview(JSON.parse('{"__proto__": {"polluted": "yes"}, "a": 1}')) as Record<
      string,
      unknown
    >;
    expect(proto).toEqual({ '[__proto__]': { polluted: 'yes' }, a: 1 });
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
  });

  it('removes NUL and lone surrogates from keys and values, joining what they split', () => {
    const out = auditPreview({ 'a\u0000b': 'x\u0000y\uD800z\uDC00', pair: '😀', secret: 'fgk_k1_\u0000' });
    expect(out).toEqual({ ab: 'xyz', pair: '😀', secret: REDACTED });
    const split = auditPreview({ note: `Bearer abcd\u0000efghijkl` });
    expect(split).toEqual({ note: REDACTED });
  });
});

// Issue 12 finding 8: these reached audit verbatim.
describe('secrets in flow text and free text', () => {
  it('redacts EDN-shaped secrets in flow_literal and keeps only a short preview of it', () => {
    const literal = `{:slug :leak :flow (flow/step :http :a {:url "https://x.test" :headers {:token "edn-canary-0001"} :api-key "edn-canary-0002"})}\n${';; filler\n'.repeat(200)}`;
    const out = auditPreview({ flow_literal: literal }) as {
      truncated: true;
      preview: { flow_literal: string };
    };
    const text = JSON.stringify(out);
    expect(text).not.toContain('edn-canary');
    expect(out.preview.flow_literal).toContain(':token "[redacted]"');
    expect(out.truncated).toBe(true);
    expect(out.preview.flow_literal.length).toBeLessThanOrEqual(AUDIT_PREVIEW_LIMITS.maxFlowTextChars + 1);
  });

  it('redacts token=… in free text without ? or &', () => {
    const out = JSON.stringify(
      auditPreview({ reason: 'it failed with token=free-canary-0003 and password=pw-0004' }),
    );
    expect(out).not.toContain('free-canary');
    expect(out).not.toContain('pw-0004');
    expect(out).toContain('token=[redacted]');
    expect(auditText('retry with apikey=free-canary-0005 now', 200)).not.toContain('free-canary');
  });
});

describe('auditText and storableText', () => {
  it('bounds, redacts and cleans one string', () => {
    expect(auditText('flowgate://flows/x?token=abc123&a=1', 2048)).toBe(
      `flowgate://flows/x?token=${REDACTED}&a=1`,
    );
    expect(auditText(`${'r'.repeat(600)}`, 500)).toBe(`${'r'.repeat(0)}…`);
    expect(auditText(`${'r '.repeat(300)}`, 500)).toBe(`${'r '.repeat(250)}…`);
    expect(storableText('a\u0000b\uDBFFc😀')).toBe('abc😀');
  });
});
