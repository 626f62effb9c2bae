// Named sets of hosts for --allow-host @NAME, and the API hosts each agent's preset adds once
// the network is filtered. One table each, documented in man/confine.1 (The network).
import { HostRule, HostRuleError, parseHostRule } from './hosts';

export interface HostSet {
  name: string;
  describe: string;
  hosts: readonly string[];
}

/**
 * @registries: the package registries and code hosts people build with. Each host is the one the
 * tool contacts by default; mirrors and private registries are given with --allow-host.
 */
export const HOST_SETS: readonly HostSet[] = [
  {
    name: 'registries',
    describe: 'package registries and code hosts: npm, Yarn, PyPI, crates.io, Go, RubyGems, GitHub',
    hosts: [
      // npm and Yarn (classic): the registry and its tarballs.
      'registry.npmjs.org',
      'registry.yarnpkg.com',
      // PyPI: the index, and the files the index points at.
      'pypi.org',
      'files.pythonhosted.org',
      // crates.io: the API, the sparse index and the crate files.
      'crates.io',
      'index.crates.io',
      'static.crates.io',
      // Go: the module proxy and the checksum database.
      'proxy.golang.org',
      'sum.golang.org',
      // RubyGems.
      'rubygems.org',
      'index.rubygems.org',
      // GitHub: git over HTTPS, the API, archives (codeload), releases and raw files.
      'github.com',
      'api.github.com',
      'codeload.github.com',
      'objects.githubusercontent.com',
      'raw.githubusercontent.com',
      'release-assets.githubusercontent.com',
    ],
  },
];

/**
 * The hosts each preset's agent needs to work at all: its model API and its sign-in. Added to
 * the list when the network is filtered (some --allow-host given); a preset alone leaves the
 * network as it is (open), since an agent also fetches documentation and runs package managers.
 */
export const PRESET_HOSTS: Readonly<Record<string, readonly string[]>> = {
  // The API, sign-in (console, claude.ai) and Anthropic's own feature flags.
  claude: ['api.anthropic.com', 'console.anthropic.com', 'claude.ai', 'statsig.anthropic.com'],
  // The API, and ChatGPT sign-in and its backend.
  codex: ['api.openai.com', 'auth.openai.com', 'chatgpt.com'],
  // Its own service and model list, and the providers it is most often pointed at.
  opencode: ['opencode.ai', 'models.dev', 'api.anthropic.com', 'api.openai.com', 'openrouter.ai', 'generativelanguage.googleapis.com'],
};

export function setNames(): string[] {
  return HOST_SETS.map((s) => `@${s.name}`);
}

/**
 * The rules for the --allow-host values as given, @sets expanded. Throws HostRuleError for the
 * first value that cannot be understood.
 */
export function parseAllowHosts(values: readonly string[]): HostRule[] {
  const rules: HostRule[] = [];
  for (const v of values) {
    if (v.startsWith('@')) {
      const set = HOST_SETS.find((s) => `@${s.name}` === v.toLowerCase());
      if (!set) throw new HostRuleError(`--allow-host '${v}': no such set; the sets are ${setNames().join(', ')}`);
      for (const h of set.hosts) rules.push(parseHostRule(h, v));
      continue;
    }
    rules.push(parseHostRule(v));
  }
  return rules;
}

/** The preset's hosts as rules (none for a preset without any, or no preset). */
export function presetHostRules(preset: string | undefined): HostRule[] {
  if (!preset) return [];
  return (PRESET_HOSTS[preset] ?? []).map((h) => parseHostRule(h, `the ${preset} preset`));
}
