export type { AdminApi } from './admin/routes.js';
export type { GatewayDeps, RouteInstaller } from './app.js';
export { createApp } from './app.js';
export type { GatewayConfig, JwtSettings, LoadConfigOptions } from './config.js';
export { loadConfig } from './config.js';
export { createSignInCode as createConsoleSignInCode } from './console/session.js';
export type { AppEnv } from './context.js';
export type { RunningGateway, StartOptions } from './server.js';
export { buildDeps, createLogger, startGateway, VERSION } from './server.js';
