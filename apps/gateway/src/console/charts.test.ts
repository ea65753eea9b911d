import { describe, expect, it } from 'vitest';
import { type ChartSeries, HorizontalBars, QuotaBar, Sparkline, STACKED, StackedBars } from './charts.js';

const OUTCOMES: ChartSeries[] = [
  { key: 'ok', label: 'ok', tone: 'c-ok' },
  { key: 'error', label: 'error', tone: 'c-error' },
];

const html = (el: unknown) => String(el);

/** Every `<tag …>` opening tag's attributes, in document order. */
function tags(markup: string, tag: string): Array<Record<string, string>> {
  return [...markup.matchAll(new RegExp(`<${tag}(\\s[^>]*)?>`, 'g'))].map((m) =>
    Object.fromEntries([...(m[1] ?? '').matchAll(/([\w:-]+)="([^"]*)"/g)].map((a) => [a[1], a[2]])),
  );
}

describe('StackedBars', () => {
  const chart = html(
    StackedBars({
      id: 'calls',
      title: 'Calls per day',
      description: 'Calls per day by outcome.',
      first: 'Day',
      series: OUTCOMES,
      items: [
        { key: 'd1', label: '11-20', values: { ok: 3, error: 1 } },
        { key: 'd2', label: '11-21', values: { ok: 2 } },
        { key: 'd3', label: '11-22', values: {} },
        { key: 'd4', label: '11-23', values: { error: 1 } },
      ],
    }),
  );

  it('draws one group per non-empty bucket and one rect per non-zero series, scaled to the tallest', () => {
    // 4 slots of 100 in a 400 viewBox, a gap of 8 between bars.
    const groups = tags(chart, 'g');
    expect(groups.map((g) => [g['data-key'], g['data-total']])).toEqual([
      ['d1', '4'],
      ['d2', '2'],
      ['d4', '1'],
    ]);
    const rects = tags(chart, 'rect');
    const base = STACKED.plotTop + STACKED.plotHeight; // 158; plot 150 high, tallest total 4
    expect(rects.map((r) => [r['data-series'], r['data-value'], r.height, r.y, r.x, r.width])).toEqual([
      ['ok', '3', '112.5', String(base - 112.5), '4', '92'],
      ['error', '1', '37.5', String(base - 150), '4', '92'],
      ['ok', '2', '75', String(base - 75), '104', '92'],
      ['error', '1', '37.5', String(base - 37.5), '304', '92'],
    ]);
    expect(rects.map((r) => r.class)).toEqual(['c-ok', 'c-error', 'c-ok', 'c-error']);
  });

  it('names itself and carries the numbers as a table', () => {
    const svg = tags(chart, 'svg')[0];
    expect(svg).toMatchObject({
      viewBox: '0 0 400 180',
      width: '100%',
      role: 'img',
      'aria-labelledby': 'calls-title calls-desc',
      'data-chart': 'stacked-bars',
    });
    expect(chart).toContain('<title id="calls-title">Calls per day</title>');
    expect(chart).toContain('<desc id="calls-desc">Calls per day by outcome.</desc>');
    expect(chart).toContain('<summary>Numbers: Calls per day</summary>');
    const rows = [...chart.matchAll(/<tr data-key="(\w+)"><th scope="row">[^<]*<\/th>(.*?)<\/tr>/g)].map(
      (m) => [m[1], [...(m[2] ?? '').matchAll(/<td class="num">([^<]*)<\/td>/g)].map((c) => c[1])],
    );
    expect(rows).toEqual([
      ['d1', ['3', '1', '4']],
      ['d2', ['2', '0', '2']],
      ['d3', ['0', '0', '0']],
      ['d4', ['0', '1', '1']],
    ]);
    // A legend in HTML, since several series are stacked.
    expect(tags(chart, 'span').filter((s) => s.class?.startsWith('swatch'))).toHaveLength(2);
    // No inline style anywhere: the console's CSP forbids it.
    expect(chart).not.toMatch(/style=/);
  });

  it('says so when there is nothing to draw', () => {
    const empty = html(
      StackedBars({ id: 'e', title: 'T', description: 'D', first: 'Day', series: OUTCOMES, items: [] }),
    );
    expect(tags(empty, 'rect')).toHaveLength(0);
    expect(tags(empty, 'g')).toHaveLength(0);
    expect(empty).toContain('No data in this period');
    // Nothing drawn, nothing to name in a legend.
    expect(empty).not.toContain('swatch');
    const zeros = html(
      StackedBars({
        id: 'z',
        title: 'T',
        description: 'D',
        first: 'Day',
        series: OUTCOMES,
        items: [{ key: 'a', label: 'a', values: { ok: 0 } }],
      }),
    );
    expect(tags(zeros, 'rect')).toHaveLength(0);
    expect(zeros).toContain('No data in this period');
  });
});

describe('HorizontalBars', () => {
  it('draws a row per item in order, widths scaled to the longest in what is left of the value column', () => {
    const chart = html(
      HorizontalBars({
        id: 'tools',
        title: 'Top tools',
        description: 'D',
        first: 'Tool',
        series: [{ key: 'calls', label: 'calls', tone: 'c-1' }],
        items: [
          { key: 'run_flow', label: 'run_flow', values: { calls: 10 } },
          { key: 'list_runs', label: 'list_runs', values: { calls: 5 } },
          { key: 'get_run', label: 'get_run', values: { calls: 1 } },
        ],
      }),
    );
    const rows = tags(chart, 'g');
    expect(rows.map((g) => g['data-key'])).toEqual(['run_flow', 'list_runs', 'get_run']);
    // 400 wide, 70 kept for the value: the longest bar is 330.
    expect(tags(chart, 'rect').map((r) => [r.width, r.y])).toEqual([
      ['330', '17'],
      ['165', '51'],
      ['33', '85'],
    ]);
    expect(tags(chart, 'svg')[0]?.viewBox).toBe('0 0 400 102');
    // One series: no legend, no total column.
    expect(chart).not.toContain('swatch');
    expect(chart).not.toContain('>Total<');
  });

  it('stacks several series along the row', () => {
    const chart = html(
      HorizontalBars({
        id: 'flows',
        title: 'Runs',
        description: 'D',
        first: 'Flow',
        series: [
          { key: 'completed', label: 'completed', tone: 'c-ok' },
          { key: 'failed', label: 'failed', tone: 'c-error' },
          { key: 'cancelled', label: 'cancelled', tone: 'c-muted' },
        ],
        items: [{ key: 'f', label: 'f', values: { completed: 3, failed: 1, cancelled: 0 } }],
      }),
    );
    expect(tags(chart, 'rect').map((r) => [r['data-series'], r.x, r.width])).toEqual([
      ['completed', '0', '247.5'],
      ['failed', '247.5', '82.5'],
    ]);
    // The legend names what is drawn: nothing was cancelled.
    expect([...chart.matchAll(/<span class="swatch (c-\w+)"/g)].map((m) => m[1])).toEqual([
      'c-ok',
      'c-error',
    ]);
  });

  it('draws nothing for no items', () => {
    const chart = html(
      HorizontalBars({ id: 'n', title: 'T', description: 'D', first: 'Tool', series: OUTCOMES, items: [] }),
    );
    expect(tags(chart, 'rect')).toHaveLength(0);
    expect(chart).toContain('No data in this period.');
  });
});

describe('QuotaBar', () => {
  const quota = (used: number, limit: number | null) =>
    html(QuotaBar({ id: 'q', title: 'T', description: 'D', used, limit, unit: 'tokens' }));

  it('fills the share of the limit, and marks a reached limit', () => {
    const half = quota(250, 1000);
    expect(tags(half, 'g')).toEqual([{ class: 'quota', 'data-value': '250', 'data-limit': '1000' }]);
    expect(tags(half, 'rect').map((r) => [r.class, r.width])).toEqual([
      ['track', '400'],
      ['c-1', '100'],
    ]);
    expect(half).toContain('250 of 1,000 tokens');
    expect(tags(quota(1500, 1000), 'rect').map((r) => [r.class, r.width])).toEqual([
      ['track', '400'],
      ['c-error', '400'],
    ]);
    expect(tags(quota(0, 1000), 'rect').map((r) => r.class)).toEqual(['track']);
  });

  it('shows the amount alone without a limit', () => {
    const none = quota(42, null);
    expect(tags(none, 'g')).toEqual([{ class: 'quota', 'data-value': '42' }]);
    expect(tags(none, 'rect')).toHaveLength(0);
    expect(none).toContain('42 tokens, no quota');
    expect(none).toContain('<td class="num">none</td>');
  });
});

describe('Sparkline', () => {
  it('puts a point per value, scaled to the largest', () => {
    const chart = html(
      Sparkline({ id: 's', title: 'T', description: 'D', values: [0, 5, 10], labels: ['a', 'b', 'c'] }),
    );
    const [line] = tags(chart, 'polyline');
    expect(line).toMatchObject({ points: '2,22 50,12 98,2', 'data-points': '3', 'data-max': '10' });
    expect(chart).toContain('<th scope="row">c</th><td class="num">10</td>');
  });

  it('lies on the baseline for zeros and draws nothing for no values', () => {
    const zeros = html(Sparkline({ id: 's', title: 'T', description: 'D', values: [0, 0], labels: [] }));
    expect(tags(zeros, 'polyline')[0]?.points).toBe('2,22 98,22');
    const none = html(Sparkline({ id: 's', title: 'T', description: 'D', values: [], labels: [] }));
    expect(tags(none, 'polyline')).toHaveLength(0);
    expect(tags(none, 'circle')).toHaveLength(0);
    const one = html(Sparkline({ id: 's', title: 'T', description: 'D', values: [3], labels: ['x'] }));
    expect(tags(one, 'circle')[0]).toMatchObject({ cx: '50', cy: '2', 'data-points': '1' });
  });
});
