/**
 * The gateway's icon (MCP `Icon`, 2025-11-25 and later; the Server Card extension's `Icon`): a small SVG as a base64
 * data URI, so it needs no route and no network. Plain shapes only: no script, no external reference, no text.
 */
export interface Icon {
  src: string;
  mimeType: string;
  sizes: string[];
}

export const SERVER_ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><rect width="24" height="24" rx="5" fill="#1f6feb"/>' +
  '<path d="M8 18V6h9M8 12h6" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round"/></svg>';

/** Fresh copies each call, so a caller cannot mutate the shared value. */
export function serverIcons(): Icon[] {
  return [
    { src: `data:image/svg+xml;base64,${btoa(SERVER_ICON_SVG)}`, mimeType: 'image/svg+xml', sizes: ['any'] },
  ];
}
