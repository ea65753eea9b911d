// Build step: writes the discovery documents generated from the tool catalog. A test fails when the
// committed files drift from what this would write.
import { writeFileSync } from 'node:fs';
import { renderRegistryManifest, renderServerCard } from '../src/discovery/documents.js';

const card = new URL('../src/discovery/server-card.json', import.meta.url);
const manifest = new URL('../../../server.json', import.meta.url);
writeFileSync(card, renderServerCard());
writeFileSync(manifest, renderRegistryManifest());
console.log('wrote apps/gateway/src/discovery/server-card.json and server.json');
