import { describe, expect, it } from 'vitest';
import { AddressRefusedError, checkHost, guardedLookup, isBlockedAddress, parseIPv6 } from './net.js';

describe('isBlockedAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '0.0.0.0',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '169.254.0.1',
    '100.64.0.1',
    '100.100.100.200',
    '192.0.0.192',
    '198.18.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::ffff:0:127.0.0.1',
    '::ffff:0:169.254.169.254',
    '::ffff:0:a9fe:a9fe',
    '::ffff:0:10.0.0.1',
    '::127.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '2002:7f00:0001::1',
    'fd00:ec2::254',
    'fc00::1',
    'fe80::1',
    'fe80::1%eth0',
    'fec0::1',
    'ff02::1',
    '2001:db8::1',
    '2001::1',
    'not-an-address',
    '',
  ])('refuses %s', (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.32.0.1',
    '172.15.255.255',
    '100.128.0.1',
    '192.169.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001::200e',
    '::ffff:8.8.8.8',
    '::ffff:0:8.8.8.8',
    '64:ff9b::808:808',
    '2002:0808:0808::1',
  ])('allows %s', (address) => {
    expect(isBlockedAddress(address)).toBe(false);
  });

  it('parses IPv6 forms exactly', () => {
    expect(parseIPv6('::1')).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4]);
    expect(parseIPv6('2001:db8::8:800:200c:417a')).toEqual([
      0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0x08, 0x08, 0x00, 0x20, 0x0c, 0x41, 0x7a,
    ]);
    expect(parseIPv6('1.2.3.4')).toBeUndefined();
  });
});

describe('checkHost', () => {
  it('refuses blocked literals and local names before any connection, unless private networks are allowed', () => {
    for (const host of [
      '127.0.0.1',
      '::1',
      'localhost',
      'api.localhost',
      'LOCALHOST.',
      'metadata.google.internal',
    ]) {
      expect(() => checkHost(host, isBlockedAddress), host).toThrow(AddressRefusedError);
      expect(() => checkHost(host, undefined)).not.toThrow();
    }
    expect(() => checkHost('api.example.com', isBlockedAddress)).not.toThrow();
    expect(() => checkHost('8.8.8.8', isBlockedAddress)).not.toThrow();
  });
});

describe('guardedLookup', () => {
  const lookupWith = (addresses: { address: string; family: number }[], all: boolean) =>
    new Promise<unknown>((resolve) => {
      guardedLookup(async () => addresses, isBlockedAddress)(
        'host.example.test',
        { all },
        (error, address, family) => {
          resolve(error ? error : { address, family });
        },
      );
    });

  it('refuses a name if any of its addresses is blocked', async () => {
    expect(
      await lookupWith(
        [
          { address: '93.184.216.34', family: 4 },
          { address: '10.0.0.1', family: 4 },
        ],
        false,
      ),
    ).toBeInstanceOf(AddressRefusedError);
    expect(await lookupWith([{ address: '::1', family: 6 }], true)).toBeInstanceOf(AddressRefusedError);
  });

  it('answers in the shape the socket asked for', async () => {
    const addresses = [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ];
    expect(await lookupWith(addresses, false)).toEqual({ address: '93.184.216.34', family: 4 });
    expect(await lookupWith(addresses, true)).toEqual({ address: addresses, family: undefined });
  });
});
