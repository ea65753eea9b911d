export * from './workspaces.js';
export * from './service-accounts.js';
export * from './api-keys.js';
export * from './connections.js';
export * from './policy.js';
export * from './audit.js';
export * from './feedback.js';
export * from './runs.js';
