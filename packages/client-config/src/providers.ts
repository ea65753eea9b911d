/** Client and transport names, kept apart from the renderers so the command line can list them cheaply. */
export const PROVIDERS = [
  'codex',
  'claude',
  'cursor',
  'windsurf',
  'vscode',
  'cline',
  'roo',
  'continue',
  'gemini',
  'opencode',
  'goose',
  'zed',
  'generic',
] as const;
export type Provider = (typeof PROVIDERS)[number];

export const TRANSPORTS = ['http', 'stdio'] as const;
export type Transport = (typeof TRANSPORTS)[number];
