#!/usr/bin/env node
// Runs the TypeScript CLI from a checkout. tsx's loader is registered in this process (no child process), so
// stdin, stdout and signals belong to whoever started it — what `flowgate mcp stdio` under an MCP client needs.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
