import { describe, expect, it } from 'vitest';
import {
  FINAL_RUN_STATUSES,
  isFinalRunStatus,
  isLiveRunStatus,
  LIVE_RUN_STATUSES,
  RUN_STATUSES,
} from './runs.js';

describe('run statuses', () => {
  it('are each either live or final, never both', () => {
    expect([...LIVE_RUN_STATUSES, ...FINAL_RUN_STATUSES].sort()).toEqual([...RUN_STATUSES].sort());
    for (const s of RUN_STATUSES) expect(isLiveRunStatus(s)).toBe(!isFinalRunStatus(s));
  });

  it('reads any other text as neither', () => {
    expect(isLiveRunStatus('done')).toBe(false);
    expect(isFinalRunStatus('done')).toBe(false);
  });
});
