/** Human-readable rendering for admin command results; `--json` bypasses all of this. */

export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(formatValue).join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Plain left-aligned columns with a header row; no colours so output pipes cleanly. */
export function renderTable(
  columns: Array<{ header: string; value: (row: Record<string, unknown>) => unknown }>,
  rows: Array<Record<string, unknown>>,
): string {
  if (rows.length === 0) return '(none)\n';
  const cells = rows.map((row) => columns.map((c) => formatValue(c.value(row))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[line(columns.map((c) => c.header)), ...cells.map(line)].join('\n')}\n`;
}

/** `key: value` lines in the object's own order. */
export function renderSummary(record: Record<string, unknown>): string {
  const keys = Object.keys(record);
  const width = Math.max(0, ...keys.map((k) => k.length));
  return keys
    .map((k) => `${`${k}:`.padEnd(width + 1)} ${formatValue(record[k])}`)
    .join('\n')
    .concat('\n');
}

export function renderJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
