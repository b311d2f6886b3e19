/**
 * Child process of group-membership.kafka.test.ts: one member of a group, in its own process
 * so the test can SIGSTOP it. Arguments: topic, group, name, session timeout (ms), heartbeat
 * interval (ms). It prints one JSON line per happening:
 *   {"event":"assignment","generation":G,"mine":[...],"members":M}
 *   {"event":"lost","alive":A,"code":C,"message":...}  A: alive() when onLost is called
 *   {"event":"alive","alive":true|false}   whenever alive() changes, checked every 20 ms
 * and leaves the group on SIGTERM.
 */
import { joinGroup } from '../../src/log/kafka/group-membership.ts';

const [topic, group, name, sessionTimeoutMs, heartbeatIntervalMs] = process.argv.slice(2);
const print = (line: object): void => void process.stdout.write(`${JSON.stringify(line)}\n`);

const membership = await joinGroup({
  brokers: process.env.KAFKA_BROKERS!.split(','),
  topic: topic!,
  group: group!,
  self: { node: `node-${name}`, url: `http://${name}.invalid:7070` },
  sessionTimeoutMs: Number(sessionTimeoutMs),
  heartbeatIntervalMs: Number(heartbeatIntervalMs),
  onAssignment: ({ generation, mine, members }) => print({ event: 'assignment', generation, mine, members: members.length }),
  onLost: (error) => print({ event: 'lost', alive: membership.alive(), code: error.code, message: error.message }),
});

let alive = membership.alive();
print({ event: 'alive', alive });
const watch = setInterval(() => {
  if (membership.alive() === alive) return;
  alive = !alive;
  print({ event: 'alive', alive });
}, 20);

process.once('SIGTERM', () => {
  clearInterval(watch);
  void membership.leave().then(() => process.exit(0));
});
