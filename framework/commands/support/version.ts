// `disagg-bench --version` (or -V), also after any command's name: the package's name and version
// and the Node.js that runs it, the two things a bug report needs.
import packageJson from '../../../package.json' with { type: 'json' };

export const VERSION_WORDS = ['--version', '-V'] as const;

export function versionLine(): string {
  return `disagg-bench ${packageJson.version} (node ${process.version})`;
}
