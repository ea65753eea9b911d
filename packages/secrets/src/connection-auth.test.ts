import { describe, expect, it } from 'vitest';
import { authHeaders, fixedHeaders } from './connection-auth.js';

const conn = (authType: string, config: Record<string, string> = {}) => ({ authType, config });

describe('authHeaders', () => {
  it('sends the secret as its auth type says', () => {
    expect(authHeaders(conn('bearer'), 's3cret')).toEqual({ authorization: 'Bearer s3cret' });
    expect(authHeaders(conn('basic'), 'user:pässword')).toEqual({
      authorization: `Basic ${Buffer.from('user:pässword', 'utf8').toString('base64')}`,
    });
    expect(authHeaders(conn('api-key', { headerName: 'X-Token' }), 'k')).toEqual({ 'X-Token': 'k' });
    expect(authHeaders(conn('api-key'), 'k')).toEqual({ 'X-API-Key': 'k' });
  });

  it('sends nothing without a secret or for an auth type without one', () => {
    expect(authHeaders(conn('bearer'), null)).toEqual({});
    expect(authHeaders(conn('bearer'), '')).toEqual({});
    expect(authHeaders(conn('none'), 's3cret')).toEqual({});
  });
});

describe('fixedHeaders', () => {
  it('takes only header:-prefixed config entries, by their header name', () => {
    expect(fixedHeaders({ model: 'm', 'header:X-Tenant': 'acme', headerName: 'X-Key' })).toEqual({
      'X-Tenant': 'acme',
    });
  });
});
