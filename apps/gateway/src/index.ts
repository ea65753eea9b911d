export { createApp } from './app.js';
export type { GatewayDeps, RouteInstaller } from './app.js';
export { loadConfig } from './config.js';
export type { GatewayConfig, JwtSettings } from './config.js';
export { buildDeps, createLogger, startGateway, VERSION } from './server.js';
export type { RunningGateway, StartOptions } from './server.js';
export type { AppEnv } from './context.js';
