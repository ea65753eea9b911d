import { TOOL_NAMES as CATALOG_TOOL_NAMES } from '@flowgate/workspace-mcp';
import type { RouteInstaller } from './app.js';
import { installConsole } from './console/routes.js';
import { installMcp } from './mcp/route.js';

/** Route plug-ins mounted behind the workspace guard by default. */
export const DEFAULT_INSTALLERS: RouteInstaller[] = [installMcp, installConsole];

/** Tool names a workspace policy may disable: the catalog's. */
export const TOOL_NAMES: readonly string[] = CATALOG_TOOL_NAMES;
