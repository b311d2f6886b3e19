/** The command table: `runlog <name>` runs the command of that name. One file per command. */
import type { AnyCommand } from '../command.ts';
import { serveCommand } from '../serve-command.ts';
import { cancel } from './cancel.ts';
import { exportCommand } from './export.ts';
import { find } from './find.ts';
import { get } from './get.ts';
import { history } from './history.ts';
import { list } from './list.ts';
import { migrate } from './migrate.ts';
import { replay } from './replay.ts';
import { state } from './state.ts';
import { submit } from './submit.ts';
import { tail } from './tail.ts';
import { verify } from './verify.ts';

export const COMMANDS: readonly AnyCommand[] = [
  serveCommand,
  submit,
  get,
  cancel,
  list,
  history,
  find,
  state,
  verify,
  replay,
  tail,
  exportCommand,
  migrate,
];
