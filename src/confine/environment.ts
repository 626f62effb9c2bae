// The confined command's environment: variables that look like secrets are removed, so an agent
// cannot read an API token it was never meant to have (and send it anywhere the network
// reaches). Pure: decides from names and values only, and never prints a value.
//
// A name looks secret when, upper-cased, it
//   - contains TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL, API_KEY, APIKEY,
//     PRIVATE_KEY, PRIVATEKEY, ACCESS_KEY, SECRET_KEY, CLIENT_KEY, SIGNING_KEY, SESSION_KEY,
//     AUTH_KEY, COOKIE, WEBHOOK, CONNECTION_STRING or SSHPASS (sshpass -e);
//   - has AUTH, PAT, KEY, KEYS, PASS, PWD, PW or DSN as one of its `_`-separated words (npm's
//     `npm_config__auth`, `GH_PAT`, `STRIPE_KEY`, `SMTP_PASS`, `DB_PWD`, `LDAP_PW`,
//     `SENTRY_DSN`; not GIT_AUTHOR_NAME nor PATH; PWD and OLDPWD are kept by name below);
//   - starts with AWS_, GH_, GITHUB_, GITLAB_, NPM_TOKEN, AZURE_, VAULT_, OP_SESSION_
//     (1Password's CLI), BW_SESSION (Bitwarden's) or DIGITALOCEAN_: every variable of those
//     tools, ids included.
//   A service's settings that are not secrets stay (ANTHROPIC_BASE_URL, HF_HOME), its keys go
//   (ANTHROPIC_API_KEY, HF_TOKEN).
// or its value looks like a credential: a URL with a password in it (scheme://user:pass@host,
// or user:pass@host without a scheme), a user:password pair (the password with a letter and a
// digit or sign in it; not host:port, not a list in a *PATH, *DIRS or LANGUAGE variable), a PEM
// or PGP private key, or a token in a well-known format (ghp_…, github_pat_…, glpat-…, xoxb-…,
// sk-…, AKIA…, npm_…, Stripe's sk_live_…, a JWT eyJ….eyJ….…).
// SSH_AUTH_SOCK and GPG_AGENT_INFO name agents that sign with the user's keys: removed too.
//
// `keep` (from `-e NAME`, and from presets for an agent's own key) keeps a variable whatever it
// looks like.

/** Substrings of a name (upper-cased) that make it look secret. */
export const SECRET_SUBSTRINGS: readonly string[] = [
  'TOKEN',
  'SECRET',
  'PASSWORD',
  'PASSWD',
  'PASSPHRASE',
  'CREDENTIAL',
  'API_KEY',
  'APIKEY',
  'PRIVATE_KEY',
  'PRIVATEKEY',
  'ACCESS_KEY',
  'SECRET_KEY',
  'CLIENT_KEY',
  'SIGNING_KEY',
  'SESSION_KEY',
  'AUTH_KEY',
  'COOKIE',
  'WEBHOOK',
  'CONNECTION_STRING',
  'SSHPASS',
];

/** Whole `_`-separated words of a name that make it look secret. */
export const SECRET_WORDS: readonly string[] = ['AUTH', 'PAT', 'KEY', 'KEYS', 'PASS', 'PWD', 'PW', 'DSN'];

/** Prefixes of a name that make it look secret: the variables of services and clouds. */
export const SECRET_PREFIXES: readonly string[] = [
  'AWS_',
  'GH_',
  'GITHUB_',
  'GITLAB_',
  'NPM_TOKEN',
  'AZURE_',
  'VAULT_',
  'OP_SESSION_',
  'BW_SESSION',
  'DIGITALOCEAN_',
];

/** Agents that act with the user's keys: removed whatever their value. */
export const AGENT_VARIABLES: readonly string[] = ['SSH_AUTH_SOCK', 'GPG_AGENT_INFO'];

/** Names that match a pattern above but hold nothing secret, and that programs need. */
export const NEVER_SECRET: readonly string[] = ['PWD', 'OLDPWD', 'XAUTHORITY', 'PATH', 'CLAUDE_CODE_SANDBOXED', 'CONFINE_SOCKET'];

const SECRET_VALUES: readonly RegExp[] = [
  /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:[^/\s@]+@/i, // scheme://user:password@host
  /^(gh[pousr]_|github_pat_)[A-Za-z0-9_]{20,}/, // GitHub
  /^glpat-[A-Za-z0-9_-]{20,}/, // GitLab
  /^xox[abprs]-[A-Za-z0-9-]{10,}/, // Slack
  /^sk-[A-Za-z0-9_-]{20,}/, // OpenAI, Anthropic (sk-ant-…)
  /^(AKIA|ASIA)[0-9A-Z]{16}$/, // AWS access key id
  /^npm_[A-Za-z0-9]{36}$/, // npm
  /^[sr]k_(live|test)_[A-Za-z0-9]{16,}/, // Stripe secret and restricted keys
  /^eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+/, // a JWT: a bearer token
  /-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----/, // PEM (RSA, EC, OPENSSH, ENCRYPTED) or PGP
  /^[^\s:/@]+:[^\s/@]+@[^\s/@]+$/, // user:password@host, no scheme (a proxy setting)
];

/**
 * user:password: a name, a colon, and a password of six or more characters with a letter and a
 * digit or sign in it, no space, slash or second colon. Not host:port (digits), nor a list of
 * words (ignoredups:erasedups), nor one in a variable that holds lists of paths or languages.
 */
function userPasswordPair(name: string, value: string): boolean {
  if (/PATH|DIRS|LANGUAGE/.test(name)) return false;
  const m = /^([A-Za-z0-9._%+-]{1,64}):([^\s:/@]{6,})$/.exec(value);
  if (!m) return false;
  const pw = m[2];
  return /[A-Za-z]/.test(pw) && /[^A-Za-z]/.test(pw) && !/^\d+$/.test(pw);
}

/** Why a variable looks secret (a short phrase), or undefined if it does not. */
export function secretReason(name: string, value: string | undefined): string | undefined {
  const upper = name.toUpperCase();
  if (AGENT_VARIABLES.includes(upper)) return 'an agent that acts with your keys';
  if (NEVER_SECRET.includes(upper)) return undefined;
  const sub = SECRET_SUBSTRINGS.find((s) => upper.includes(s));
  if (sub) return `name contains ${sub}`;
  const words = upper.split('_');
  const word = SECRET_WORDS.find((w) => words.includes(w));
  if (word) return `name has the word ${word}`;
  const prefix = SECRET_PREFIXES.find((p) => upper.startsWith(p));
  if (prefix) return `name starts with ${prefix}`;
  if (value !== undefined && (SECRET_VALUES.some((re) => re.test(value)) || userPasswordPair(upper, value))) return 'value looks like a credential';
  return undefined;
}

export interface FilteredEnvironment {
  /** What the command gets. */
  env: Record<string, string>;
  /** The names removed, sorted, each with why (never the value). */
  removed: { name: string; why: string }[];
  /** Names asked to be kept that are not set (worth a note under -v). */
  keptMissing: string[];
}

/**
 * The command's environment: `env` without the variables that look secret, except those named
 * in `keep` (exact names).
 */
export function filterEnvironment(env: NodeJS.ProcessEnv | Record<string, string | undefined>, keep: readonly string[] = []): FilteredEnvironment {
  const keepSet = new Set(keep);
  const out: Record<string, string> = {};
  const removed: { name: string; why: string }[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const why = keepSet.has(name) ? undefined : secretReason(name, value);
    if (why) removed.push({ name, why });
    else out[name] = value;
  }
  removed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const keptMissing = [...keepSet].filter((n) => env[n] === undefined).sort();
  return { env: out, removed, keptMissing };
}

/** A valid `-e` argument: a variable's name (letters, digits, `_`, not starting with a digit). */
export function checkKeepName(name: string): string | undefined {
  if (name.includes('=')) return `-e takes a variable's name, not NAME=VALUE ('${name}'): to set one, run \`env NAME=VALUE CMD\` under confine`;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return `-e '${name}' is not a variable name`;
  return undefined;
}

/** The lines -v prints: what was removed and why, and kept names that were not set. */
export function describeEnvironment(result: FilteredEnvironment): string[] {
  const lines: string[] = [];
  if (result.removed.length === 0) lines.push('environment: no variable looks secret; nothing removed');
  for (const r of result.removed) lines.push(`environment: removed ${r.name} (${r.why}); keep it with -e ${r.name}`);
  for (const n of result.keptMissing) lines.push(`environment: -e ${n}: not set, nothing to keep`);
  return lines;
}
