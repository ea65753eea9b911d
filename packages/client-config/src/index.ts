/**
 * @flowgate/client-config — paste-ready MCP server entries for each supported client (`flowgate mcp config`, and
 * the console's "Connect your agent" page), plus the endpoint, token-variable and narrowing helpers they rely on.
 */
export * from './config.js';
export * from './credentials.js';
export * from './narrowing-flags.js';
export * from './providers.js';
