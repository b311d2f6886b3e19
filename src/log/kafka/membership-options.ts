/** The options of joinGroup (group-membership.ts), checked: bad ones are InvalidArgument naming the value. */
import { invalidArgument, type RunlogError } from '../../errors.ts';
import { describe, orDefault, readArray, requireFunction, requireName, requireObject, requireTimerMs } from '../../validation/index.ts';
import type { GroupAssignment, NodeAddress } from './sticky-assigner.ts';

export interface MembershipOptions {
  brokers: string[];
  clientId?: string;
  /** The events topic: the group subscribes to it but never fetches from it. */
  topic: string;
  /** The consumer group id. */
  group: string;
  /** This node, advertised to the other members in the group's member metadata. */
  self: NodeAddress;
  /** How long the group coordinator waits for a heartbeat before it gives this node's partitions to others (default 10 s; the broker allows 6 s to 30 min unless configured otherwise). */
  sessionTimeoutMs?: number;
  /** How often this node heartbeats (default 1 s); below sessionTimeoutMs, a third of it or less is wise. */
  heartbeatIntervalMs?: number;
  /** Each new generation's assignment, in order. */
  onAssignment(assignment: GroupAssignment): void;
  /** The membership is lost (the session expired, the coordinator forgot this member): release every partition. */
  onLost(error: RunlogError): void;
}

export type CheckedMembershipOptions = Required<MembershipOptions>;

const KEYS = [
  'brokers',
  'clientId',
  'topic',
  'group',
  'self',
  'sessionTimeoutMs',
  'heartbeatIntervalMs',
  'onAssignment',
  'onLost',
] as const;
const MAX_ID_LENGTH = 255;
const MAX_URL_LENGTH = 2048;

export function checkMembershipOptions(value: unknown): CheckedMembershipOptions {
  const options = requireObject('options', value, KEYS);
  const sessionTimeoutMs = requireTimerMs('sessionTimeoutMs', orDefault(options.sessionTimeoutMs, 10_000), 1_000);
  const heartbeatIntervalMs = requireTimerMs('heartbeatIntervalMs', orDefault(options.heartbeatIntervalMs, 1_000), 10);
  if (heartbeatIntervalMs >= sessionTimeoutMs) {
    throw invalidArgument(`heartbeatIntervalMs must be less than sessionTimeoutMs (${sessionTimeoutMs}), got ${heartbeatIntervalMs}`);
  }
  return {
    brokers: checkBrokers(options.brokers),
    clientId: checkId('clientId', orDefault(options.clientId, 'runlog')),
    topic: checkTopic(options.topic),
    group: checkId('group', options.group),
    self: checkAddress(options.self),
    sessionTimeoutMs,
    heartbeatIntervalMs,
    onAssignment: requireFunction<MembershipOptions['onAssignment']>('onAssignment', options.onAssignment),
    onLost: requireFunction<MembershipOptions['onLost']>('onLost', options.onLost),
  };
}

function checkBrokers(value: unknown): string[] {
  const brokers = readArray('brokers', value, 'a non-empty list of host:port strings');
  if (brokers.length === 0 || !brokers.every((b) => typeof b === 'string' && /^[^\s:]+:\d{1,5}$/.test(b))) {
    throw invalidArgument(`brokers must be a non-empty list of host:port strings, got ${describe(value)}`);
  }
  return brokers as string[];
}

function checkTopic(value: unknown): string {
  if (typeof value !== 'string' || !/^[a-zA-Z0-9._-]{1,200}$/.test(value)) {
    throw invalidArgument(`topic must be a legal Kafka topic name ([a-zA-Z0-9._-], 1-200 chars), got ${describe(value)}`);
  }
  return value;
}

function checkId(name: string, value: unknown): string {
  const id = requireName(name, value);
  if (id.length > MAX_ID_LENGTH) throw invalidArgument(`${name} must be at most ${MAX_ID_LENGTH} characters, got ${describe(id)}`);
  return id;
}

/** A node id and an absolute http(s) URL without credentials, query or fragment: the base other nodes and clients are sent to. */
function checkAddress(value: unknown): NodeAddress {
  const address = requireObject('self', value, ['node', 'url']);
  const node = checkId('self.node', address.node);
  const url = address.url;
  if (typeof url !== 'string' || url.length > MAX_URL_LENGTH || !isBaseUrl(url)) {
    throw invalidArgument(`self.url must be an absolute http or https URL (no credentials, query or fragment), got ${describe(url)}`);
  }
  return { node, url };
}

function isBaseUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return (
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    !url.username &&
    !url.password &&
    !url.search &&
    !url.hash &&
    !text.includes('#')
  );
}
