/** The --help texts: the command list (`runlog --help`) and each command's usage and options. */
import type { AnyCommand, Command, OptionSpecs } from './command.ts';

export const EXIT_CODES = `exit codes: 0 ok, 1 refused (the queue, server or log said no), 2 usage (bad command, flag or value)`;

export function mainHelp(commands: readonly AnyCommand[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const list = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n');
  return `usage: runlog <command> [options]
       runlog <command> --help

commands:
${list}

${EXIT_CODES}
`;
}

export function usageLine(command: Command): string {
  return `usage: runlog ${command.name}${command.usage === '' ? '' : ` ${command.usage}`} [options]`;
}

export function commandHelp(command: Command): string {
  const details = command.details === undefined ? '' : `\n${command.details.trimEnd()}\n`;
  return `${usageLine(command)}

${command.summary}

options:
${optionList({ ...command.options, help: { type: 'boolean', short: 'h', help: 'print this help and exit 0' } })}
${details}
${EXIT_CODES}
`;
}

function optionList(options: OptionSpecs): string {
  const rows = Object.entries(options).map(([name, spec]) => {
    const flag = `${spec.short === undefined ? '    ' : `-${spec.short}, `}--${name}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`;
    return [flag, spec.multiple ? `${spec.help} (repeatable)` : spec.help] as const;
  });
  const width = Math.max(...rows.map(([flag]) => flag.length));
  return rows.map(([flag, help]) => `  ${flag.padEnd(width)}  ${help}`).join('\n');
}
