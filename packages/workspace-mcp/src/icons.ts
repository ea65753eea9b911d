/**
 * The gateway's icons (MCP `Icon`, 2025-11-25 and later; the Server Card extension's `Icon`): small SVGs. Plain shapes
 * only: no script, no external reference, no text. The server, prompts and resources carry them as base64 data URIs
 * (no route, no network); tools carry the gateway's URL of the same SVG (`/icons/<toolset>.svg`), the shortest `Icon`
 * the schema allows, because every byte of tools/list counts against its token budget (token-budget.ts).
 */
import type { ProtocolVersion } from './protocol.js';
import { TOOLSETS, type Toolset } from './schemas.js';

/** MCP `Icon`: only `src` is required; `mimeType` and `sizes` are left out where the URL and the SVG say it. */
export interface Icon {
  src: string;
  mimeType?: string;
  sizes?: string[];
}

export const SERVER_ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><rect width="24" height="24" rx="5" fill="#1f6feb"/>' +
  '<path d="M8 18V6h9M8 12h6" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round"/></svg>';

function dataUriIcon(svg: string): Icon {
  return { src: `data:image/svg+xml;base64,${btoa(svg)}`, mimeType: 'image/svg+xml', sizes: ['any'] };
}

/** Fresh copies each call, so a caller cannot mutate the shared value. */
export function serverIcons(): Icon[] {
  return [dataUriIcon(SERVER_ICON_SVG)];
}

/** One white glyph on a coloured tile per toolset: tells a tool's kind at a glance in a host's UI. */
const TOOLSET_GLYPHS: Readonly<Record<Toolset, { fill: string; path: string }>> = Object.freeze({
  context: { fill: '#1f6feb', path: 'M12 11v6M12 7v.01' },
  read: { fill: '#57606a', path: 'M7 8h10M7 12h10M7 16h6' },
  search: { fill: '#8250df', path: 'M10.5 15a4.5 4.5 0 1 0 0-9 4.5 4.5 0 0 0 0 9zM14 14l4 4' },
  run: { fill: '#1a7f37', path: 'M9 7l8 5-8 5z' },
  setup: { fill: '#9a6700', path: 'M7 8h10M7 16h10M10 6v4M14 14v4' },
  authoring: { fill: '#bf3989', path: 'M7 17l10-10M7 17h3' },
  release: { fill: '#cf222e', path: 'M12 17V7M8 11l4-4 4 4' },
  debug: { fill: '#bc4c00', path: 'M8 8l8 8M16 8l-8 8' },
  feedback: { fill: '#0a7ea4', path: 'M7 8h10v6h-6l-3 3v-3H7z' },
});

export const TOOLSET_ICON_SVGS: Readonly<Record<Toolset, string>> = Object.freeze(
  Object.fromEntries(
    TOOLSETS.map((ts) => {
      const { fill, path } = TOOLSET_GLYPHS[ts];
      return [
        ts,
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">' +
          `<rect width="24" height="24" rx="5" fill="${fill}"/><path d="${path}" fill="none" stroke="#fff" ` +
          'stroke-width="2.5" stroke-linecap="round" stroke-linejoin="round"/></svg>',
      ];
    }),
  ) as Record<Toolset, string>,
);

/** The icon of a toolset, as a fresh list. */
export function toolsetIcons(toolset: Toolset): Icon[] {
  return [dataUriIcon(TOOLSET_ICON_SVGS[toolset])];
}

/** Where the gateway serves a toolset's SVG (public, cacheable, no authentication; the gateway's discovery routes). */
export function toolsetIconPath(toolset: Toolset): string {
  return `/icons/${toolset}.svg`;
}

/**
 * The icon of a toolset as the gateway's URL: `{src}` only. The `.svg` path and the served
 * `Content-Type: image/svg+xml` tell the type, and an SVG scales (the schema's missing `sizes` means any size).
 */
export function toolsetIconUrl(base: string, toolset: Toolset): Icon[] {
  return [{ src: `${base.replace(/\/+$/, '')}${toolsetIconPath(toolset)}` }];
}

/**
 * `icons` on tools, prompts, resources and resource templates arrived with 2025-11-25 (SEP-973) and stay in
 * 2026-07-28; earlier revisions' schemas have no such field, so their clients never get it.
 */
export function iconsDefinedAt(version: ProtocolVersion): boolean {
  return version === '2025-11-25' || version === '2026-07-28';
}

/** The base URL tool icons are served from for a request of `version`, or null where `Tool` has no `icons`. */
export function toolIconBase(version: ProtocolVersion, publicBaseUrl: string): string | null {
  return iconsDefinedAt(version) ? publicBaseUrl.replace(/\/+$/, '') : null;
}
