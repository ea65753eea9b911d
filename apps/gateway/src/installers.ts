import type { RouteInstaller } from './app.js';

/** Route plug-ins mounted by default (the MCP endpoint and discovery documents add themselves here). */
export const DEFAULT_INSTALLERS: RouteInstaller[] = [];

/** Tool names a workspace policy may disable; read from the catalog once it is mounted. */
export const TOOL_NAMES: readonly string[] = [];
