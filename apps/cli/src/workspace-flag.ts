import { type Command, Option } from 'commander';

/**
 * One spelling for the workspace on every command: `--workspace <id>`. The `mcp` commands used to say
 * `--workspace-id`, so every command that declares `--workspace` also takes `--workspace-id` (hidden from help)
 * with the same parser. Applied once to the whole program after registration, so a command added later only
 * needs `.requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)` to get the alias.
 */
export function acceptWorkspaceIdAlias(root: Command): void {
  const primary = root.options.find((o) => o.long === '--workspace');
  if (primary && !root.options.some((o) => o.long === '--workspace-id')) {
    // Commander checks mandatory options before hooks run; the check moves into the hook so the alias counts.
    const required = primary.mandatory;
    primary.mandatory = false;
    const alias = new Option('--workspace-id <id>', 'same as --workspace').hideHelp();
    if (primary.parseArg) alias.argParser(primary.parseArg);
    root.addOption(alias);
    root.hook('preAction', (cmd) => {
      const opts = cmd.opts<{ workspace?: string; workspaceId?: string }>();
      if (
        opts.workspace !== undefined &&
        opts.workspaceId !== undefined &&
        opts.workspace !== opts.workspaceId
      ) {
        cmd.error('error: --workspace and --workspace-id name different workspaces', {
          code: 'commander.conflictingOption',
        });
      }
      const workspace = opts.workspace ?? opts.workspaceId;
      if (workspace === undefined) {
        if (required) {
          cmd.error(`error: required option '${primary.flags}' not specified`, {
            code: 'commander.missingMandatoryOptionValue',
          });
        }
        return;
      }
      cmd.setOptionValue('workspace', workspace);
    });
  }
  for (const sub of root.commands) acceptWorkspaceIdAlias(sub);
}
