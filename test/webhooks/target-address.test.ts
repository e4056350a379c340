/**
 * Which addresses a webhook may go to (issue 24, SSRF; src/webhooks/target-address.ts): only
 * public unicast addresses by default; --webhook-allow-private adds loopback and the private
 * networks, never link-local, unspecified, multicast or reserved addresses. Pure functions: no
 * socket is opened here.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { endpointUrlProblem } from '../../src/webhooks/endpoints.js';
import { addressRange, forbiddenHostRange, forbiddenRange } from '../../src/webhooks/target-address.js';

const publicOnly = { allowPrivate: false };
const sandbox = { allowPrivate: true };

test('SSRF: loopback, private, CGNAT, link-local, unspecified, multicast and reserved addresses are not public, IPv4 and IPv6', () => {
  const cases: Array<[string, string]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.20', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['::127.0.0.1', 'reserved'],
    ['not an address', 'reserved'],
  ];
  for (const [address, range] of cases) assert.equal(addressRange(address), range, address);
});

test('SSRF: IPv6 forms that carry an IPv4 address are judged by it (IPv4-mapped, NAT64, 6to4)', () => {
  assert.equal(addressRange('::ffff:127.0.0.1'), 'loopback');
  assert.equal(addressRange('::ffff:7f00:1'), 'loopback');
  assert.equal(addressRange('::ffff:a9fe:a9fe'), 'link-local');
  assert.equal(addressRange('::ffff:10.1.2.3'), 'private');
  assert.equal(addressRange('64:ff9b::127.0.0.1'), 'loopback');
  assert.equal(addressRange('2002:a9fe:a9fe::1'), 'link-local');
  assert.equal(addressRange('::ffff:8.8.8.8'), 'public');
  assert.equal(addressRange('64:ff9b::808:808'), 'public', 'DNS64 answers this form for public hosts on IPv6-only networks');
});

test('SSRF: public unicast addresses are targets', () => {
  for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '192.169.0.1', '2606:4700:4700::1111', '2a00:1450::1']) {
    assert.equal(addressRange(address), 'public', address);
    assert.equal(forbiddenRange(address, publicOnly), undefined, address);
  }
});

test('--webhook-allow-private opens loopback, private and CGNAT addresses, never link-local, unspecified, multicast or reserved ones', () => {
  for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '10.0.0.1', '192.168.0.1', 'fd00::1', '100.64.0.1']) {
    assert.notEqual(forbiddenRange(address, publicOnly), undefined, `${address} by default`);
    assert.equal(forbiddenRange(address, sandbox), undefined, `${address} with --webhook-allow-private`);
  }
  for (const address of ['169.254.169.254', '::ffff:169.254.169.254', 'fe80::1', '0.0.0.0', '::', '224.0.0.1', '255.255.255.255']) {
    assert.notEqual(forbiddenRange(address, sandbox), undefined, address);
  }
});

test('SSRF: a URL\'s host is checked in the form the URL parser reads it: 2130706433, 0x7f.1, 127.1, 0177.0.0.1, [::ffff:127.0.0.1], localhost', () => {
  for (const url of ['http://2130706433:6379/', 'http://0x7f.1:6379/', 'http://127.1/', 'http://0177.0.0.1/', 'http://127.0.0.1./', 'http://[::ffff:127.0.0.1]/', 'http://[::1]:9090/metrics', 'http://localhost:8080/operator/v1', 'http://LOCALHOST./', 'http://api.localhost/']) {
    assert.equal(forbiddenHostRange(new URL(url).hostname, publicOnly), 'loopback', url);
  }
  assert.equal(forbiddenHostRange(new URL('http://0/').hostname, publicOnly), 'unspecified');
  assert.equal(forbiddenHostRange(new URL('http://2852039166/').hostname, sandbox), 'link-local', '169.254.169.254 as one number');
  assert.equal(forbiddenHostRange('example.com', publicOnly), undefined, 'a name is checked when it is resolved, at delivery');
});

test('SSRF: registration refuses a forbidden address with a message that names the rule and, where it helps, the setting', () => {
  const loopback = endpointUrlProblem('http://2130706433:6379/', publicOnly);
  assert.match(loopback ?? '', /host 127\.0\.0\.1 is a loopback address/);
  assert.match(loopback ?? '', /--webhook-allow-private \(COREGATE_WEBHOOK_ALLOW_PRIVATE=true\)/);
  const metadata = endpointUrlProblem('http://169.254.169.254/latest/meta-data/', sandbox);
  assert.match(metadata ?? '', /host 169\.254\.169\.254 is a link-local address, never a webhook target/);
  assert.doesNotMatch(metadata ?? '', /allow-private/, 'the setting would not help: not named');
  assert.equal(endpointUrlProblem('http://127.0.0.1:9000/hooks', sandbox), undefined);
  assert.equal(endpointUrlProblem('https://example.com/hooks', publicOnly), undefined);
});
