/** The command table: `runlog <name>` runs the command of that name. One file per command. */
import type { AnyCommand } from '../command.ts';
import { exportCommand } from './export.ts';
import { history } from './history.ts';
import { replay } from './replay.ts';
import { serveCommand } from '../serve-command.ts';
import { tail } from './tail.ts';

export const COMMANDS: readonly AnyCommand[] = [serveCommand, history, replay, tail, exportCommand];
