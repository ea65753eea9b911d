/** @jsxImportSource hono/jsx */
/**
 * Server-rendered SVG charts for the console. No script and no inline style (the page CSP allows neither): shapes are
 * placed with SVG attributes and coloured by class from the stylesheet. Every chart scales with its container
 * (viewBox, width 100%), names itself (<title>, <desc>, aria-labelledby) and carries its numbers as a table in a
 * <details> behind it, so nothing is only a picture. Shapes carry data-* attributes with the values they draw.
 */
import type { Child } from 'hono/jsx';

/** One stacked series: its key (the data's), what the legend says, and the class that colours it. */
export interface ChartSeries {
  key: string;
  label: string;
  /** A class of the stylesheet's `.c-*` palette, e.g. `c-ok`, `c-error`, `c-1`. */
  tone: string;
}

/** A column of a stacked bar chart, or a row of a horizontal one: a label and a value per series key. */
export interface ChartItem {
  key: string;
  label: string;
  values: Record<string, number>;
}

interface ChartText {
  /** Unique on the page: the ids of the title and description derive from it. */
  id: string;
  title: string;
  /** The text alternative: what the chart shows, in a sentence or two. */
  description: string;
}

/** Vertical bars: the plot's size in viewBox units. */
export const STACKED = { width: 400, height: 180, plotTop: 8, plotHeight: 150 } as const;
/** Horizontal bars: the width, and the height of one row (a label line above its bar). */
export const HBARS = { width: 400, rowHeight: 34, barHeight: 14, valueSpace: 70 } as const;
/** Sparkline: a small fixed box. */
export const SPARK = { width: 100, height: 24, pad: 2 } as const;

/** Two decimals: enough for a 400-unit viewBox, and stable in tests. */
const r2 = (n: number) => Math.round(n * 100) / 100;

const total = (values: Record<string, number>, series: readonly ChartSeries[]) =>
  series.reduce((sum, s) => sum + safe(values[s.key]), 0);

/** Negative or non-finite values are drawn as nothing rather than breaking the geometry. */
function safe(n: number | undefined): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0;
}

const fmt = (n: number) => n.toLocaleString('en-US');

function Frame(props: ChartText & { viewBox: string; kind: string; children?: Child; class?: string }) {
  return (
    <svg
      class={props.class ?? 'chart'}
      viewBox={props.viewBox}
      width="100%"
      role="img"
      aria-labelledby={`${props.id}-title ${props.id}-desc`}
      data-chart={props.kind}
      preserveAspectRatio="xMinYMin meet"
    >
      <title id={`${props.id}-title`}>{props.title}</title>
      <desc id={`${props.id}-desc`}>{props.description}</desc>
      {props.children}
    </svg>
  );
}

/** The series a chart stacks, named by colour; only those drawn, and none for a single series. */
function Legend(props: { series: readonly ChartSeries[]; items: readonly ChartItem[] }) {
  if (props.series.length < 2) return null;
  const drawn = props.series.filter((s) => props.items.some((i) => safe(i.values[s.key]) > 0));
  if (drawn.length === 0) return null;
  return (
    <ul class="legend">
      {drawn.map((s) => (
        <li>
          <span class={`swatch ${s.tone}`} aria-hidden="true" />
          {s.label}
        </li>
      ))}
    </ul>
  );
}

/** The numbers behind a chart: one row per item, one column per series, and a total when there are several. */
function NumbersTable(props: {
  caption: string;
  first: string;
  items: readonly ChartItem[];
  series: readonly ChartSeries[];
}) {
  const several = props.series.length > 1;
  return (
    <details class="numbers">
      <summary>Numbers: {props.caption}</summary>
      <div class="scroll" tabindex={0}>
        <table>
          <thead>
            <tr>
              <th scope="col">{props.first}</th>
              {props.series.map((s) => (
                <th scope="col">{s.label}</th>
              ))}
              {several ? <th scope="col">Total</th> : null}
            </tr>
          </thead>
          <tbody>
            {props.items.length === 0 ? (
              <tr>
                <td colspan={props.series.length + (several ? 2 : 1)}>No data in this period.</td>
              </tr>
            ) : (
              props.items.map((item) => (
                <tr data-key={item.key}>
                  <th scope="row">{item.label}</th>
                  {props.series.map((s) => (
                    <td class="num">{fmt(safe(item.values[s.key]))}</td>
                  ))}
                  {several ? <td class="num">{fmt(total(item.values, props.series))}</td> : null}
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
    </details>
  );
}

/**
 * Vertical bars over time, each stacked by series from the baseline up, scaled to the tallest bar. One `<g
 * class="bar">` per item with at least one value (`data-key`, `data-total`), one `<rect>` per non-zero series in it
 * (`data-series`, `data-value`).
 */
export function StackedBars(
  props: ChartText & { items: readonly ChartItem[]; series: readonly ChartSeries[]; first: string },
) {
  const { width, height, plotTop, plotHeight } = STACKED;
  const baseline = plotTop + plotHeight;
  const totals = props.items.map((i) => total(i.values, props.series));
  const max = Math.max(0, ...totals);
  const slot = props.items.length > 0 ? width / props.items.length : width;
  // A gap between bars while they are wide enough to afford one.
  const gap = slot >= 6 ? Math.min(slot * 0.2, 8) : 0;
  const first = props.items[0];
  const last = props.items.at(-1);
  return (
    <figure class="chart-box">
      <Frame
        id={props.id}
        title={props.title}
        description={props.description}
        viewBox={`0 0 ${width} ${height}`}
        kind="stacked-bars"
      >
        {max === 0 ? (
          <text class="chart-empty" x={width / 2} y={plotTop + plotHeight / 2} text-anchor="middle">
            No data in this period
          </text>
        ) : (
          props.items.map((item, i) => {
            if (totals[i] === 0) return null;
            let top = baseline;
            return (
              <g class="bar" data-key={item.key} data-total={totals[i]}>
                {props.series.map((s) => {
                  const value = safe(item.values[s.key]);
                  if (value === 0) return null;
                  const h = r2((value / max) * plotHeight);
                  top = r2(top - h);
                  return (
                    <rect
                      class={s.tone}
                      x={r2(i * slot + gap / 2)}
                      y={top}
                      width={r2(slot - gap)}
                      height={h}
                      data-series={s.key}
                      data-value={value}
                    >
                      <title>{`${item.label} · ${s.label}: ${fmt(value)}`}</title>
                    </rect>
                  );
                })}
              </g>
            );
          })
        )}
        <line class="axis" x1={0} y1={baseline} x2={width} y2={baseline} />
        {max > 0 ? (
          <text class="tick" x={2} y={plotTop + 10}>
            {fmt(max)}
          </text>
        ) : null}
        {first ? (
          <text class="tick" x={0} y={height - 4}>
            {first.label}
          </text>
        ) : null}
        {last && last !== first ? (
          <text class="tick" x={width} y={height - 4} text-anchor="end">
            {last.label}
          </text>
        ) : null}
      </Frame>
      <Legend series={props.series} items={props.items} />
      <NumbersTable caption={props.title} first={props.first} items={props.items} series={props.series} />
    </figure>
  );
}

/**
 * Horizontal bars, one row per item in the given order (a label above its bar, the total after it), stacked by series
 * and scaled to the longest. One `<g class="row">` per item (`data-key`, `data-total`), one `<rect>` per non-zero
 * series (`data-series`, `data-value`).
 */
export function HorizontalBars(
  props: ChartText & { items: readonly ChartItem[]; series: readonly ChartSeries[]; first: string },
) {
  const { width, rowHeight, barHeight, valueSpace } = HBARS;
  const plotWidth = width - valueSpace;
  const totals = props.items.map((i) => total(i.values, props.series));
  const max = Math.max(0, ...totals);
  const rows = Math.max(1, props.items.length);
  const height = rows * rowHeight;
  return (
    <figure class="chart-box">
      <Frame
        id={props.id}
        title={props.title}
        description={props.description}
        viewBox={`0 0 ${width} ${height}`}
        kind="horizontal-bars"
      >
        {props.items.length === 0 || max === 0 ? (
          <text class="chart-empty" x={width / 2} y={rowHeight / 2 + 5} text-anchor="middle">
            No data in this period
          </text>
        ) : (
          props.items.map((item, i) => {
            const y = i * rowHeight;
            let left = 0;
            return (
              <g class="row" data-key={item.key} data-total={totals[i]}>
                <text class="label" x={0} y={y + 13}>
                  {item.label}
                </text>
                {props.series.map((s) => {
                  const value = safe(item.values[s.key]);
                  if (value === 0) return null;
                  const w = r2((value / max) * plotWidth);
                  const x = left;
                  left = r2(left + w);
                  return (
                    <rect
                      class={s.tone}
                      x={x}
                      y={y + 17}
                      width={w}
                      height={barHeight}
                      data-series={s.key}
                      data-value={value}
                    >
                      <title>{`${item.label} · ${s.label}: ${fmt(value)}`}</title>
                    </rect>
                  );
                })}
                <text class="value" x={r2(left + 4)} y={y + 29}>
                  {fmt(totals[i] ?? 0)}
                </text>
              </g>
            );
          })
        )}
      </Frame>
      <Legend series={props.series} items={props.items} />
      <NumbersTable caption={props.title} first={props.first} items={props.items} series={props.series} />
    </figure>
  );
}

/**
 * A used amount against an optional limit, in one `<g class="quota">` (`data-value`, `data-limit` when there is one):
 * with a limit, a track and a bar filling `used / limit` (capped at the full width, marked once reached); without
 * one, the amount as text alone, since there is nothing to fill.
 */
export function QuotaBar(props: ChartText & { used: number; limit: number | null; unit: string }) {
  const { width } = HBARS;
  const used = safe(props.used);
  const limit = props.limit !== null && props.limit > 0 ? props.limit : null;
  const share = limit === null ? 0 : Math.min(1, used / limit);
  const over = limit !== null && used >= limit;
  return (
    <figure class="chart-box">
      <Frame
        id={props.id}
        title={props.title}
        description={props.description}
        viewBox={`0 0 ${width} 40`}
        kind="quota"
      >
        <g class="quota" data-value={used} data-limit={limit ?? undefined}>
          {limit !== null ? <rect class="track" x={0} y={8} width={width} height={16} /> : null}
          {share > 0 ? (
            <rect class={over ? 'c-error' : 'c-1'} x={0} y={8} width={r2(share * width)} height={16} />
          ) : null}
          <text class={limit === null ? 'label' : 'tick'} x={0} y={limit === null ? 24 : 38}>
            {limit === null
              ? `${fmt(used)} ${props.unit}, no quota`
              : `${fmt(used)} of ${fmt(limit)} ${props.unit}`}
          </text>
        </g>
      </Frame>
      <details class="numbers">
        <summary>Numbers: {props.title}</summary>
        <div class="scroll" tabindex={0}>
          <table>
            <tbody>
              <tr>
                <th scope="row">Used</th>
                <td class="num">{fmt(used)}</td>
              </tr>
              <tr>
                <th scope="row">Quota</th>
                <td class="num">{limit === null ? 'none' : fmt(limit)}</td>
              </tr>
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

/**
 * A small line of values over equal steps, scaled to the largest (all zeros lie on the baseline). One `<polyline>`
 * with a point per value (`data-points`, `data-max`); a single value is a dot.
 */
export function Sparkline(props: ChartText & { values: readonly number[]; labels: readonly string[] }) {
  const { width, height, pad } = SPARK;
  const values = props.values.map(safe);
  const max = Math.max(0, ...values);
  const step = values.length > 1 ? (width - 2 * pad) / (values.length - 1) : 0;
  const points = values.map((v, i) => {
    const x = values.length > 1 ? pad + i * step : width / 2;
    const y = height - pad - (max > 0 ? (v / max) * (height - 2 * pad) : 0);
    return `${r2(x)},${r2(y)}`;
  });
  return (
    <span class="spark-box">
      <Frame
        id={props.id}
        title={props.title}
        description={props.description}
        viewBox={`0 0 ${width} ${height}`}
        kind="sparkline"
        class="spark"
      >
        {values.length > 1 ? (
          <polyline class="spark-line" points={points.join(' ')} data-points={values.length} data-max={max} />
        ) : null}
        {values.length === 1 ? (
          <circle
            class="spark-dot"
            cx={width / 2}
            cy={Number(points[0]?.split(',')[1])}
            r={2}
            data-points={1}
            data-max={max}
          />
        ) : null}
      </Frame>
      <details class="numbers">
        <summary>Numbers</summary>
        <table>
          <tbody>
            {values.map((v, i) => (
              <tr>
                <th scope="row">{props.labels[i] ?? String(i + 1)}</th>
                <td class="num">{fmt(v)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </span>
  );
}
