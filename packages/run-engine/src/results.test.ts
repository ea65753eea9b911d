import { describe, expect, it } from 'vitest';
import { conversionMeter } from './limits.js';
import { renderResult, textualMimeType } from './results.js';
import { evalValue } from './testing.js';

const render = (
  expr: string,
  options: { maxBytes?: number; previewChars?: number; knownSecrets?: string[] } = {},
) =>
  renderResult(evalValue(expr), {
    meter: conversionMeter(),
    knownSecrets: options.knownSecrets ?? [],
    maxBytes: options.maxBytes ?? 1_000_000,
    ...(options.previewChars ? { previewChars: options.previewChars } : {}),
  });

describe('renderResult', () => {
  it.each([
    ['{:flowgate.viewer/kind :html :flowgate.viewer/value "<p>x</p>"}', 'text/html', '<p>x</p>'],
    ['{:flowgate.viewer/kind :markdown :flowgate.viewer/value "# T"}', 'text/markdown', '# T'],
    ['{:flowgate.viewer/kind :text :flowgate.viewer/value "plain"}', 'text/plain', 'plain'],
    ['{:flowgate.viewer/kind :text :flowgate.viewer/value [1 "a"]}', 'text/plain', '[1 "a"]'],
    ['{:flowgate.viewer/kind "html" :flowgate.viewer/value "<b>s</b>"}', 'text/html', '<b>s</b>'],
    ['{:flowgate.viewer/kind :json :flowgate.viewer/value {:a [1 :k]}}', 'application/json', '{"a":[1,"k"]}'],
    [
      '{:flowgate.viewer/mime-type "text/csv; charset=utf-8" :flowgate.viewer/value "a,b\\n1,2"}',
      'text/csv',
      'a,b\n1,2',
    ],
    [
      '{:flowgate.viewer/mime-type "application/vnd.api+json" :flowgate.viewer/value "{}"}',
      'application/vnd.api+json',
      '{}',
    ],
  ])('unwraps %s to %s', (expr, mimeType, text) => {
    expect(render(expr)).toMatchObject({ mimeType, text });
  });

  it('serves everything else as JSON, including envelopes it does not understand', () => {
    expect(render('{:a 1 :b [:x nil]}')).toEqual({
      mimeType: 'application/json',
      text: '{"a":1,"b":["x",null]}',
      json: { a: 1, b: ['x', null] },
      bytes: 22,
      preview: '{"a":1,"b":["x",null]}',
      previewTruncated: false,
    });
    expect(render('"just text"')).toMatchObject({ mimeType: 'application/json', text: '"just text"' });
    expect(render('nil')).toMatchObject({ mimeType: 'application/json', text: 'null', json: null });
    expect(render('{:flowgate.viewer/kind :pdf :flowgate.viewer/value "x"}')).toMatchObject({
      mimeType: 'application/json',
    });
    expect(render('{:flowgate.viewer/mime-type "image/png" :flowgate.viewer/value "x"}')).toMatchObject({
      mimeType: 'application/json',
    });
    expect(render('{:flowgate.viewer/mime-type "text/csv" :flowgate.viewer/value [1]}')).toMatchObject({
      mimeType: 'application/json',
    });
  });

  it('redacts text and JSON', () => {
    const html = render(
      '{:flowgate.viewer/kind :html :flowgate.viewer/value "<p>key sk-live-abcdefghijklmnop1234 and s3cret-value-1</p>"}',
      {
        knownSecrets: ['s3cret-value-1'],
      },
    );
    expect(html.text).toBe('<p>key [redacted] and [redacted]</p>');
    expect(
      render('{:user "ann" :api-key "k" :note "s3cret-value-1"}', { knownSecrets: ['s3cret-value-1'] }).json,
    ).toEqual({
      user: 'ann',
      'api-key': '[redacted]',
      note: '[redacted]',
    });
  });

  it('caps the size and previews without splitting a character', () => {
    expect(() => render('(str (range 1000))', { maxBytes: 100 })).toThrow(
      expect.objectContaining({
        code: 'result_too_large',
        message: 'the run result is larger than 100 bytes',
      }),
    );
    expect(() =>
      render('{:flowgate.viewer/kind :html :flowgate.viewer/value (str (range 1000))}', { maxBytes: 100 }),
    ).toThrow(expect.objectContaining({ code: 'result_too_large' }));
    const r = render('{:flowgate.viewer/kind :text :flowgate.viewer/value "ab😀cd"}', { previewChars: 3 });
    expect(r).toMatchObject({ text: 'ab😀cd', bytes: 8, preview: 'ab', previewTruncated: true });
  });

  it('knows textual MIME types', () => {
    expect(textualMimeType('Text/HTML; charset=UTF-8')).toBe('text/html');
    expect(textualMimeType('application/ld+json')).toBe('application/ld+json');
    expect(textualMimeType('application/xml')).toBe('application/xml');
    expect(textualMimeType('application/octet-stream')).toBeUndefined();
    expect(textualMimeType('text/html\r\nX-Evil: 1')).toBeUndefined();
  });
});
