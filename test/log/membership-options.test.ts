/**
 * joinGroup refuses malformed options with InvalidArgument naming the bad value, before it
 * connects anywhere (the brokers below do not exist: a check that let a case through would
 * fail with LogUnavailable instead, or time out).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { joinGroup, type MembershipOptions } from '../../src/log/kafka/group-membership.ts';

const valid: MembershipOptions = {
  brokers: ['127.0.0.1:1'],
  topic: 'events',
  group: 'g',
  self: { node: 'n1', url: 'http://127.0.0.1:7070' },
  onAssignment: () => undefined,
  onLost: () => undefined,
};

/** [what is wrong, the options, text the message must hold]. */
const CASES: ReadonlyArray<[string, unknown, string]> = [
  ['not an object', 'brokers=x', '"brokers=x"'],
  ['an unknown option', { ...valid, sesionTimeoutMs: 5 }, '"sesionTimeoutMs"'],
  ['brokers missing', { ...valid, brokers: undefined }, 'brokers'],
  ['brokers empty', { ...valid, brokers: [] }, 'brokers must be a non-empty list'],
  ['a broker without a port', { ...valid, brokers: ['localhost'] }, "got [ 'localhost' ]"],
  ['a broker that is not text', { ...valid, brokers: [9092] }, '9092'],
  ['an illegal topic', { ...valid, topic: 'a topic' }, '"a topic"'],
  ['an empty topic', { ...valid, topic: '' }, 'topic must be a legal Kafka topic name ([a-zA-Z0-9._-], 1-200 chars), got ""'],
  ['an empty group', { ...valid, group: '' }, 'group must be a non-empty string, got ""'],
  ['a group that is not text', { ...valid, group: 7 }, 'group must be a non-empty string, got 7'],
  ['a group too long', { ...valid, group: 'g'.repeat(256) }, 'group must be at most 255'],
  ['a clientId with NUL', { ...valid, clientId: 'a\u0000b' }, 'clientId must not contain NUL'],
  ['self missing', { ...valid, self: undefined }, 'self must be a plain object, got undefined'],
  ['self without a node', { ...valid, self: { url: 'http://h:1' } }, 'self.node must be a non-empty string, got undefined'],
  ['self with an extra key', { ...valid, self: { node: 'n', url: 'http://h:1', port: 1 } }, '"port"'],
  [
    'a url that is no URL',
    { ...valid, self: { node: 'n', url: 'h:1:2' } },
    'self.url must be an absolute http or https URL (no credentials, query or fragment), got "h:1:2"',
  ],
  ['a url of another scheme', { ...valid, self: { node: 'n', url: 'ftp://h/' } }, '"ftp://h/"'],
  ['a url with credentials', { ...valid, self: { node: 'n', url: 'http://u:p@h/' } }, '"http://u:p@h/"'],
  ['a url with a query', { ...valid, self: { node: 'n', url: 'http://h/?a=1' } }, '"http://h/?a=1"'],
  ['a session too short', { ...valid, sessionTimeoutMs: 999 }, 'sessionTimeoutMs must be an integer from 1000 to 2147483647, got 999'],
  ['a session that is not an integer', { ...valid, sessionTimeoutMs: 6000.5 }, '6000.5'],
  ['a session of null', { ...valid, sessionTimeoutMs: null }, 'sessionTimeoutMs must be an integer from 1000 to 2147483647, got null'],
  ['a heartbeat of 0', { ...valid, heartbeatIntervalMs: 0 }, 'heartbeatIntervalMs must be an integer from 10 to 2147483647, got 0'],
  [
    'a heartbeat not below the session',
    { ...valid, sessionTimeoutMs: 6000, heartbeatIntervalMs: 6000 },
    'heartbeatIntervalMs must be less than sessionTimeoutMs (6000), got 6000',
  ],
  ['the default heartbeat not below a short session', { ...valid, sessionTimeoutMs: 1000 }, 'less than sessionTimeoutMs (1000), got 1000'],
  ['onAssignment missing', { ...valid, onAssignment: undefined }, 'onAssignment must be a function, got undefined'],
  ['onLost not a function', { ...valid, onLost: 'x' }, 'onLost must be a function, got "x"'],
];

describe('joinGroup options', () => {
  for (const [what, options, text] of CASES) {
    it(`refuses ${what}`, async () => {
      await assert.rejects(joinGroup(options as MembershipOptions), (e: unknown) => {
        assert.ok(isRunlogError(e, 'InvalidArgument'), `not InvalidArgument: ${String(e)}`);
        assert.ok(e.message.includes(text), `${JSON.stringify(e.message)} does not hold ${JSON.stringify(text)}`);
        return true;
      });
    });
  }
});
