import { describe, expect, it } from 'vitest';
import { listenTaskIdsRefusal, tasksMethodRefusal } from './tasks-extension.js';

const DECLARED = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const REQUIRED = { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } };

describe('the Tasks extension capability rules', () => {
  it('refuses the extension methods to a request that does not declare it, and nothing else', () => {
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      expect(tasksMethodRefusal(method, {})).toMatchObject({ code: -32021, data: REQUIRED });
      expect(tasksMethodRefusal(method, null)).toMatchObject({ code: -32021 });
      // The extension entry must be an object; `true` or a list is no declaration.
      expect(
        tasksMethodRefusal(method, { extensions: { 'io.modelcontextprotocol/tasks': true } }),
      ).toMatchObject({
        code: -32021,
      });
      expect(tasksMethodRefusal(method, DECLARED)).toBeNull();
    }
    for (const method of ['tools/call', 'tools/list', 'tasks/list', 'tasks/result']) {
      expect(tasksMethodRefusal(method, {})).toBeNull();
    }
  });

  it('refuses subscriptions/listen task notifications without the declaration', () => {
    expect(listenTaskIdsRefusal({ notifications: { taskIds: ['t1'] } }, {})).toMatchObject({
      code: -32021,
      data: REQUIRED,
    });
    expect(listenTaskIdsRefusal({ notifications: { taskIds: ['t1'] } }, DECLARED)).toBeNull();
    // Asking for no task notifications needs no declaration.
    expect(listenTaskIdsRefusal({ notifications: { taskIds: [] } }, {})).toBeNull();
    expect(listenTaskIdsRefusal({ notifications: { toolsListChanged: true } }, {})).toBeNull();
    expect(listenTaskIdsRefusal({}, {})).toBeNull();
  });
});
