/**
 * The `runlog-sticky` group protocol: what a member tells the group when it joins, and what
 * the group's leader answers every member (the leader runs stickyAssignment).
 *
 * Both travel in Kafka's consumer protocol layout (kafkajs's AssignerProtocol: version, topics
 * or topic-partitions, then userData bytes), so Kafka's own tools can describe the group. The
 * userData is JSON:
 *   member metadata  { v: 1, node, url, generation, owned }  its address, and what it owned in
 *                    that generation (the claims stickiness keeps)
 *   assignment       { v: 1, generation, members: [{node, url}], owners: [index | null] }  the
 *                    WHOLE map, the same for every member, so each node knows who owns every
 *                    partition (to name the owner in NotOwner answers) and not only its own
 */
import kafkajs from 'kafkajs';
import { RunlogError } from '../../errors.ts';
import { describe } from '../../validation/index.ts';
import { stickyAssignment } from './sticky-assignment.ts';

export const PROTOCOL_NAME = 'runlog-sticky';
const LAYOUT_VERSION = 0;
const USER_DATA_VERSION = 1;

/** A node: a stable id (hostname-pid-random) and the base URL it serves at. */
export interface NodeAddress {
  node: string;
  url: string;
}

export interface GroupAssignment {
  generation: number;
  /** The partitions this node owns in this generation, ascending. */
  mine: readonly number[];
  /** Index = partition: its owner in this generation; every member gets the whole map. */
  owners: readonly (NodeAddress | null)[];
  members: readonly NodeAddress[];
}

/** What a member says of itself when it joins. */
export interface MemberClaimData {
  self: NodeAddress;
  generation: number;
  owned: readonly number[];
}

export function encodeMemberMetadata(topic: string, claim: MemberClaimData): Buffer {
  const { self, generation, owned } = claim;
  const userData = json({ v: USER_DATA_VERSION, node: self.node, url: self.url, generation, owned });
  return kafkajs.AssignerProtocol.MemberMetadata.encode({ version: LAYOUT_VERSION, topics: [topic], userData });
}

/** A member's claim, or a claim of nothing (its address then its member id) when its metadata is not runlog's. */
export function decodeMemberMetadata(memberId: string, metadata: Buffer): MemberClaimData {
  const data = attempt(() => parseUserData(kafkajs.AssignerProtocol.MemberMetadata.decode(metadata)?.userData));
  const { node, url, generation, owned } = data ?? {};
  if (isText(node) && typeof url === 'string' && Number.isSafeInteger(generation) && isIntegers(owned)) {
    return { self: { node, url }, generation: generation as number, owned };
  }
  return { self: { node: memberId, url: '' }, generation: -1, owned: [] };
}

export interface JoinedMember {
  memberId: string;
  memberMetadata: Buffer;
}

/** The leader's answer: every member's assignment (its partitions of `topic`, and the whole map). */
export function assignGroup(
  topic: string,
  partitionCount: number,
  generation: number,
  joined: readonly JoinedMember[],
): Array<{ memberId: string; memberAssignment: Buffer }> {
  const claims = joined.map((m) => ({ memberId: m.memberId, ...decodeMemberMetadata(m.memberId, m.memberMetadata) }));
  // The node id first: the order (and so who gets the larger quotas) survives a member's rejoin under a new member id.
  const owners = stickyAssignment(
    partitionCount,
    claims.map((c) => ({ key: `${c.self.node}\u0000${c.memberId}`, owned: c.owned, generation: c.generation })),
  );
  const userData = json({ v: USER_DATA_VERSION, generation, members: claims.map((c) => c.self), owners });
  return claims.map((c, i) => {
    const partitions = owners.flatMap((owner, p) => (owner === i ? [p] : []));
    const memberAssignment = kafkajs.AssignerProtocol.MemberAssignment.encode({
      version: LAYOUT_VERSION,
      assignment: { [topic]: partitions },
      userData,
    });
    return { memberId: c.memberId, memberAssignment };
  });
}

/** This member's assignment, as the leader encoded it; Corrupt when it is not (a leader of another protocol, a broken leader). */
export function decodeAssignment(topic: string, partitionCount: number, buffer: Buffer): GroupAssignment {
  const decoded = attempt(() => kafkajs.AssignerProtocol.MemberAssignment.decode(buffer));
  const data = parseUserData(decoded?.userData);
  const { generation, members, owners } = data ?? {};
  const mine: unknown = decoded?.assignment[topic] ?? [];
  if (
    !Number.isSafeInteger(generation) ||
    !Array.isArray(members) ||
    !members.every(isAddress) ||
    !Array.isArray(owners) ||
    owners.length !== partitionCount ||
    !owners.every((o) => o === null || (Number.isInteger(o) && o >= 0 && o < members.length)) ||
    !isIntegers(mine)
  ) {
    throw new RunlogError(
      'Corrupt',
      `the group's assignment is not a ${PROTOCOL_NAME} assignment of ${partitionCount} partitions: ${describe(data)}`,
    );
  }
  const addresses = members.map((m: NodeAddress) => ({ node: m.node, url: m.url }));
  return {
    generation: generation as number,
    mine: [...mine].sort((a, b) => a - b),
    owners: owners.map((o: number | null) => (o === null ? null : addresses[o]!)),
    members: addresses,
  };
}

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

/** The userData's JSON object, or null for anything else (no JSON, another version). */
function parseUserData(userData: Buffer | undefined): Record<string, unknown> | null {
  const parsed = attempt((): unknown => JSON.parse(userData?.toString('utf8') ?? ''));
  const ok = typeof parsed === 'object' && parsed !== null && (parsed as { v?: unknown }).v === USER_DATA_VERSION;
  return ok ? (parsed as Record<string, unknown>) : null;
}

/** What `read` returns, or null when it throws (kafkajs's decoder on bytes that are not the consumer protocol). */
function attempt<T>(read: () => T): T | null {
  try {
    return read();
  } catch {
    return null;
  }
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function isIntegers(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((p) => Number.isInteger(p));
}

function isAddress(value: unknown): value is NodeAddress {
  const { node, url } = (typeof value === 'object' && value !== null ? value : {}) as Partial<Record<string, unknown>>;
  return isText(node) && typeof url === 'string';
}
