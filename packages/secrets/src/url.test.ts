import { describe, expect, it } from 'vitest';
import { displayUrl, urlCredentialProblem } from './url.js';

// The base URLs of issue 12 finding 4: each carries a credential a reader must never see.
const CREDENTIAL_URLS = [
  'https://user:pass@api.example.com/v1',
  'https://user@api.example.com/v1',
  'https://api.example.com/v1?api_key=abc123',
  'https://api.hubapi.com/crm?hapikey=abc123',
  'https://api.openweathermap.org/data/2.5?appid=abc123',
  'https://bucket.s3.amazonaws.com/x?X-Amz-Signature=abcdef0123',
  'https://app.example.com/api;jsessionid=ABC123DEF',
  'https://app.example.com/cb#access_token=abc123',
  'https://hooks.slack.com/services/T0000AAAA/B0000BBBB/XXXXXXXXXXXXXXXXXXXXXXX1',
  'https://discord.com/api/webhooks/123456789012345678/abcDEF123456789ghiJKL_mnoPQR-stu',
];

describe('urlCredentialProblem', () => {
  it.each(CREDENTIAL_URLS)('refuses %s', (url) => {
    expect(urlCredentialProblem(url)).not.toBeNull();
  });

  it.each([
    'https://api.example.com',
    'https://api.example.com/v1/',
    'https://management.azure.com/x?api-version=2024-01-01',
    'http://localhost:8080/openai/v1',
    'https://api.github.com/repos/octo-org/some-long-repository-name',
  ])('accepts %s', (url) => {
    expect(urlCredentialProblem(url)).toBeNull();
  });
});

describe('displayUrl', () => {
  it('keeps scheme, host, port and a plain path', () => {
    expect(displayUrl('https://api.example.com:8443/v1/')).toBe('https://api.example.com:8443/v1/');
    expect(displayUrl('https://api.example.com')).toBe('https://api.example.com');
    expect(displayUrl(null)).toBeNull();
  });

  it.each(CREDENTIAL_URLS)('shows %s without its credential', (url) => {
    const shown = displayUrl(url) ?? '';
    for (const secret of [
      'pass',
      'user',
      'abc123',
      'abcdef0123',
      'ABC123DEF',
      'XXXXXXXXXXXXXXXXXXXXXXX1',
      'abcDEF',
    ])
      expect(shown).not.toContain(secret);
    expect(shown).toMatch(/^https:\/\/[a-z0-9.-]+(:\d+)?(\/|$)/);
  });
});
