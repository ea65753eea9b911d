// Build step: writes the documents the app imports as modules (the discovery card and server.json generated from
// the tool catalog, the console assets' content hashes). A test fails when a committed file drifts.
import { writeFileSync } from 'node:fs';
import { GENERATED_FILES, REPOSITORY_ROOT } from '../src/generated-files.js';

for (const file of GENERATED_FILES) writeFileSync(new URL(file.path, REPOSITORY_ROOT), file.render());
console.log(`wrote ${GENERATED_FILES.map((f) => f.path).join(', ')}`);
