import type { DbHandle } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { REDACTED } from '@flowgate/secrets';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedbackInput } from './feedback.js';
import { seedWorkspace, storedFeedback, testWorkspaceDeps } from './testing.js';
import { openWorkspace, type Workspace } from './workspace.js';

let h: DbHandle;
let ws: Workspace;
beforeAll(async () => {
  h = await createTestDb();
  await seedWorkspace(h.db, 'ws-fb', 'Feedback');
  ws = openWorkspace(testWorkspaceDeps(h.db), {
    workspaceId: 'ws-fb',
    actor: { kind: 'service_account', id: 'sa_reporter' },
  });
});
afterAll(async () => h?.close());

const input = (over: Partial<FeedbackInput>): FeedbackInput => ({
  summary: 'Setup failed',
  details: 'It did not work',
  area: 'setup',
  resourceUri: null,
  runId: null,
  flowSlug: null,
  context: null,
  ...over,
});

describe('feedback.send', () => {
  it('redacts secrets in every free-text field before storing, and says so', async () => {
    const receipt = await ws.feedback.send(
      input({
        summary: 'Token Bearer abcdefghijklmnopqrstu leaked',
        details: 'Used key fgk_k1_abcdefghijklmnopqrstuvwxyz012345 and it was refused',
        resourceUri: 'flowgate://flows/demo?token=s3cr3t-value-123',
        runId: 'run_1',
        flowSlug: 'demo',
        context: { client: 'cursor', api_key: 'sk-live-1234567890abcdefgh', attempts: 2 },
      }),
    );
    const expected = {
      summary: `Token ${REDACTED} leaked`,
      details: `Used key ${REDACTED} and it was refused`,
      area: 'setup',
      resourceUri: `flowgate://flows/demo?token=${REDACTED}`,
      runId: 'run_1',
      flowSlug: 'demo',
      context: { client: 'cursor', api_key: REDACTED, attempts: 2 },
    };
    expect(receipt).toEqual({
      feedbackId: expect.stringMatching(/^fb_[A-Za-z0-9]{16}$/),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      redacted: true,
      stored: expected,
    });
    const row = (await storedFeedback(h.db, 'ws-fb')).find((f) => f.id === receipt.feedbackId);
    expect(row).toMatchObject({ ...expected, principalType: 'service_account', principalId: 'sa_reporter' });
    expect(row?.createdAt.toISOString()).toBe(receipt.createdAt);
    expect(JSON.stringify(row)).not.toMatch(/abcdefghijklmnopqrstu|sk-live|s3cr3t/);
  });

  it('stores clean feedback as given and reports that nothing was redacted', async () => {
    const clean = input({ area: 'docs', context: { page: 'overview', helpful: false } });
    const receipt = await ws.feedback.send(clean);
    expect(receipt).toMatchObject({ redacted: false, stored: clean });
    const row = (await storedFeedback(h.db, 'ws-fb')).find((f) => f.id === receipt.feedbackId);
    expect(row).toMatchObject({ summary: 'Setup failed', details: 'It did not work', area: 'docs' });
  });
});
