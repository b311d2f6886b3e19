/**
 * A node's membership of the Kafka consumer group that decides which node owns which
 * partition of the events topic (the cluster contract: notes/CLUSTER.md, "Membership").
 *
 * The classic (eager) group protocol, driven directly on kafkajs's broker connections (see
 * group-coordinator.ts for why not through a kafkajs Consumer). kafkajs speaks no cooperative
 * protocol, and runlog needs none: a node keeps serving its partitions through a rebalance
 * and only reacts to the new generation's assignment, and fencing (not rebalance timing)
 * keeps two nodes from acknowledging on one partition. The member never fetches and never
 * commits offsets: the group only decides ownership.
 *
 * One loop, one request at a time:
 *
 *   joining   JoinGroup (blocks at the broker until every member has rejoined), then the
 *             leader runs the runlog-sticky assignment (sticky-assigner.ts) and every member
 *             SyncGroups for its assignment: a new generation, handed to onAssignment
 *   stable    a Heartbeat every heartbeatIntervalMs; REBALANCE_IN_PROGRESS (a member came or
 *             went) or ILLEGAL_GENERATION: joining again, with the same member id
 *   lost      the coordinator no longer knows this member (UNKNOWN_MEMBER_ID: its session
 *             expired), or no request has proved membership for a whole session (the
 *             coordinator has expired it by now, or soon): onLost, then joining again as a new
 *             member, for as long as the process lives; errors back off (src/retry.ts)
 *   left      leave(): LeaveGroup, so the others rebalance at once instead of after a session
 *
 * alive() guards against a node that lost its membership without knowing (a GC pause, a
 * SIGSTOP, a partition from the broker) answering from a stale view: it is true only while the
 * last proof of membership is younger than the session timeout, by the monotonic clock. A
 * proof is dated when its request was SENT, not when its answer came: an answer read after a
 * long pause may describe a session that has since expired.
 *
 * (A little over 300 lines: the loop, its recovery and the watchdog share one member's state,
 * and splitting them would spread that state over files.)
 */
import kafkajs from 'kafkajs';
import { RunlogError } from '../../errors.ts';
import { Backoff, sleep } from '../../retry.ts';
import { callListener } from '../../call-listener.ts';
import { emitProcessWarning } from '../../warnings.ts';
import { describe } from '../../validation/index.ts';
import { hasErrorType, quietLogCreator, toRunlogError } from './errors.ts';
import { createGroupCluster, type GroupCluster, type GroupCoordinator } from './group-coordinator.ts';
import { checkMembershipOptions, type CheckedMembershipOptions, type MembershipOptions } from './membership-options.ts';
import {
  PROTOCOL_NAME,
  assignGroup,
  decodeAssignment,
  encodeMemberMetadata,
  type GroupAssignment,
  type NodeAddress,
} from './sticky-assigner.ts';

export type { GroupAssignment, MembershipOptions, NodeAddress };

export interface GroupMembership {
  /** The latest generation's assignment; null once the membership is lost or left (until the next one). */
  current(): GroupAssignment | null;
  /** Alive: the last successful heartbeat/join is younger than the session timeout (monotonic clock). */
  alive(): boolean;
  /** Leaves the group (the others rebalance at once) and disconnects; no callback is called after it. */
  leave(): Promise<void>;
}

/** Joins the group; resolves once the first generation's assignment was handed to onAssignment. */
export async function joinGroup(options: MembershipOptions): Promise<GroupMembership> {
  const membership = new KafkaGroupMembership(checkMembershipOptions(options));
  await membership.start();
  return membership;
}

/** Errors no retry mends: the first join fails with them; later they are reported through onLost while the loop keeps trying. */
const FATAL_TYPES = ['INVALID_SESSION_TIMEOUT', 'INCONSISTENT_GROUP_PROTOCOL', 'INVALID_GROUP_ID', 'GROUP_AUTHORIZATION_FAILED'];

class KafkaGroupMembership implements GroupMembership {
  readonly #options: CheckedMembershipOptions;
  readonly #cluster: GroupCluster;
  readonly #stop = new AbortController();
  #coordinator: GroupCoordinator | null = null;
  #partitionCount = 0;
  #memberId = '';
  #generation = -1;
  #mustJoin = true;
  #joinPending = false;
  #assignment: GroupAssignment | null = null;
  /** performance.now() when the request that last proved membership was sent. */
  #provedAt = -Infinity;
  #watchdog: NodeJS.Timeout | undefined;
  #loop: Promise<void> = Promise.resolve();
  #leaving: Promise<void> | null = null;
  readonly #firstJoin = deferred();

  constructor(options: CheckedMembershipOptions) {
    this.#options = options;
    const kafka = new kafkajs.Kafka({
      clientId: options.clientId,
      brokers: options.brokers,
      logLevel: kafkajs.logLevel.ERROR,
      logCreator: quietLogCreator,
      requestTimeout: options.sessionTimeoutMs,
      retry: { initialRetryTime: 100, retries: 2 },
    });
    this.#cluster = createGroupCluster(kafka);
  }

  current(): GroupAssignment | null {
    return this.#assignment;
  }

  alive(): boolean {
    return performance.now() - this.#provedAt < this.#options.sessionTimeoutMs;
  }

  leave(): Promise<void> {
    this.#leaving ??= this.#leave();
    return this.#leaving;
  }

  async start(): Promise<void> {
    const { topic, brokers, group, sessionTimeoutMs } = this.#options;
    try {
      await this.#cluster.connect();
      await this.#cluster.addTargetTopic(topic);
      this.#partitionCount = this.#cluster.findTopicPartitionMetadata(topic).length;
    } catch (error) {
      await this.#cluster.disconnect().catch(() => undefined);
      if (hasErrorType(error, 'UNKNOWN_TOPIC_OR_PARTITION')) {
        throw new RunlogError('InvalidArgument', `topic ${describe(topic)} does not exist on ${brokers.join(',')}`, { cause: error });
      }
      throw toRunlogError(error, `joining group ${group} on ${brokers.join(',')}`);
    }
    this.#loop = this.#run();
    this.#watchdog = setInterval(() => this.#checkSession(), Math.min(this.#options.heartbeatIntervalMs, 1_000)).unref();
    // A rebalance waits up to a session for members that are gone; a first join that takes two is not coming.
    const deadlineMs = 2 * sessionTimeoutMs + 5_000;
    const deadline = setTimeout(() => {
      this.#firstJoin.reject(
        new RunlogError('LogUnavailable', `no assignment from group ${group} on ${brokers.join(',')} within ${deadlineMs} ms`),
      );
    }, deadlineMs);
    try {
      await this.#firstJoin.promise;
    } catch (error) {
      await this.leave();
      throw error;
    } finally {
      clearTimeout(deadline);
    }
  }

  async #run(): Promise<void> {
    let backoff = this.#backoff();
    while (!this.#stop.signal.aborted) {
      try {
        if (this.#mustJoin) await this.#joinAndSync();
        else await this.#heartbeatAfterInterval();
        backoff = this.#backoff();
      } catch (error) {
        if (this.#stop.signal.aborted) return;
        if (this.#recover(error)) continue;
        try {
          await backoff.after(error);
        } catch {
          return; // aborted: leaving
        }
      }
    }
  }

  async #joinAndSync(): Promise<void> {
    const { group: groupId, topic, self, sessionTimeoutMs } = this.#options;
    const coordinator = await this.#findCoordinator();
    const claim = { self, generation: this.#assignment?.generation ?? -1, owned: this.#assignment?.mine ?? [] };
    const joinSentAt = performance.now();
    this.#joinPending = true;
    const joined = await coordinator
      .joinGroup({
        groupId,
        sessionTimeout: sessionTimeoutMs,
        // The others rejoin within a heartbeat interval; one that has not within a session is gone.
        rebalanceTimeout: sessionTimeoutMs,
        memberId: this.#memberId,
        protocolType: 'consumer',
        groupProtocols: [{ name: PROTOCOL_NAME, metadata: encodeMemberMetadata(topic, claim) }],
      })
      .finally(() => (this.#joinPending = false));
    this.#memberId = joined.memberId;
    this.#proved(joinSentAt);
    if (joined.groupProtocol !== PROTOCOL_NAME) throw new RunlogError('Corrupt', `group ${groupId} chose protocol ${joined.groupProtocol}`);
    const isLeader = joined.leaderId === joined.memberId;
    const groupAssignment = isLeader ? assignGroup(topic, this.#partitionCount, joined.generationId, joined.members) : [];
    const syncSentAt = performance.now();
    const { memberAssignment } = await coordinator.syncGroup({
      groupId,
      generationId: joined.generationId,
      memberId: joined.memberId,
      groupAssignment,
    });
    const assignment = decodeAssignment(topic, this.#partitionCount, memberAssignment);
    if (assignment.generation !== joined.generationId) {
      throw new RunlogError(
        'Corrupt',
        `group ${groupId}'s leader assigned generation ${assignment.generation} in generation ${joined.generationId}`,
      );
    }
    this.#generation = joined.generationId;
    this.#proved(syncSentAt);
    this.#mustJoin = false;
    this.#deliver(assignment);
  }

  async #heartbeatAfterInterval(): Promise<void> {
    await sleep(this.#options.heartbeatIntervalMs, { signal: this.#stop.signal });
    const coordinator = await this.#findCoordinator();
    const sentAt = performance.now();
    try {
      await coordinator.heartbeat({ groupId: this.#options.group, groupGenerationId: this.#generation, memberId: this.#memberId });
    } catch (error) {
      if (!hasErrorType(error, 'REBALANCE_IN_PROGRESS')) throw error;
      this.#mustJoin = true; // still a member (the coordinator checked): rejoin now
    }
    this.#proved(sentAt);
  }

  /** After a failed step: true to go on at once (the group asks for a rejoin), false to back off first. */
  #recover(error: unknown): boolean {
    if (hasErrorType(error, 'REBALANCE_IN_PROGRESS') || hasErrorType(error, 'ILLEGAL_GENERATION')) {
      this.#mustJoin = true;
      return true;
    }
    if (hasErrorType(error, 'UNKNOWN_MEMBER_ID')) {
      this.#memberId = '';
      this.#lose(
        new RunlogError('LogUnavailable', `group ${this.#options.group} no longer knows this member: its session expired`, {
          cause: error,
        }),
      );
      return true;
    }
    const fatal = FATAL_TYPES.some((type) => hasErrorType(error, type));
    const failure = fatal
      ? new RunlogError('InvalidArgument', `group ${this.#options.group} refused this member: ${describe(error)}`, { cause: error })
      : toRunlogError(error, `the membership of group ${this.#options.group}`);
    if (this.#assignment === null) {
      if (fatal) this.#firstJoin.reject(failure);
    } else if (fatal) this.#lose(failure);
    this.#coordinator = null; // it may have moved, or its connection broke
    return false;
  }

  /** The watchdog: a whole session without proof of membership means the coordinator has expired this member (or soon will). */
  #checkSession(): void {
    if (this.#assignment === null || this.#joinPending || this.alive()) return;
    const { group, sessionTimeoutMs } = this.#options;
    this.#lose(
      new RunlogError(
        'LogUnavailable',
        `no request of this member reached group ${group} for ${sessionTimeoutMs} ms (its session timeout)`,
      ),
    );
  }

  #lose(error: RunlogError): void {
    if (this.#assignment === null || this.#stop.signal.aborted) return;
    this.#assignment = null;
    this.#provedAt = -Infinity;
    this.#mustJoin = true;
    callListener(this.#options.onLost, [error], (failure) => this.#listenerFailed('onLost', failure));
  }

  #deliver(assignment: GroupAssignment): void {
    // A follower that rejoins with unchanged metadata (after an error between JoinGroup and SyncGroup) gets its generation again.
    if (this.#stop.signal.aborted || this.#assignment?.generation === assignment.generation) return;
    this.#assignment = Object.freeze({
      ...assignment,
      mine: Object.freeze([...assignment.mine]),
      owners: Object.freeze(assignment.owners.map((o) => (o === null ? null : Object.freeze({ ...o })))),
      members: Object.freeze(assignment.members.map((m) => Object.freeze({ ...m }))),
    });
    this.#firstJoin.resolve();
    callListener(this.#options.onAssignment, [this.#assignment], (failure) => this.#listenerFailed('onAssignment', failure));
  }

  #listenerFailed(name: string, failure: unknown): void {
    emitProcessWarning({ code: 'RUNLOG_MEMBERSHIP_LISTENER_FAILED', message: `the group membership's ${name} threw ${describe(failure)}` });
  }

  #proved(sentAt: number): void {
    this.#provedAt = Math.max(this.#provedAt, sentAt);
  }

  async #findCoordinator(): Promise<GroupCoordinator> {
    this.#coordinator ??= await this.#cluster.findGroupCoordinator({ groupId: this.#options.group });
    return this.#coordinator;
  }

  #backoff(): Backoff {
    return new Backoff({ firstMs: 100, maxMs: Math.max(100, this.#options.heartbeatIntervalMs), signal: this.#stop.signal });
  }

  /** Stops the loop (a request in flight is answered first: a JoinGroup may wait for a rebalance), then LeaveGroup and disconnect. */
  async #leave(): Promise<void> {
    this.#stop.abort();
    clearInterval(this.#watchdog);
    await this.#loop;
    this.#assignment = null;
    this.#provedAt = -Infinity;
    if (this.#memberId !== '') {
      try {
        const coordinator = await this.#findCoordinator();
        await coordinator.leaveGroup({ groupId: this.#options.group, memberId: this.#memberId });
      } catch (error) {
        const message = `member ${this.#memberId} could not leave group ${this.#options.group} (the others wait for its session to expire): ${describe(error)}`;
        emitProcessWarning({ code: 'RUNLOG_GROUP_LEAVE_FAILED', message });
      }
    }
    await this.#cluster.disconnect().catch(() => undefined);
  }
}

/** Promise.withResolvers (Node 22), for Node 20. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
