// What the broker needs to know about a tool a confined command may ask to run outside: one file
// per tool (gh.ts), so that tools can be added without touching the broker.

/** What a rule says about one command line. */
export type Verdict =
  /** Never run, and the user is not asked. */
  | { kind: 'never'; reason: string }
  /**
   * Ask the user. `remember` is the rule "Allow always" keeps (e.g. 'gh pr create'), or null when
   * this command line is asked about every time (then `reason` says why).
   */
  | { kind: 'ask'; remember: string | null; reason?: string };

export interface JudgeContext {
  /** The directory the command is confined to (real path). */
  root: string;
  /** The tool's working directory (real path, inside root). */
  cwd: string;
  /** The variables forwarded from the command (already filtered by forwardEnv). */
  env: Record<string, string>;
}

export interface Tool {
  /** The name the command calls it by, and the shim's name on its PATH. */
  name: string;
  /** What the rules say about running the tool with these arguments. */
  judge(argv: string[], context: JudgeContext): Verdict;
  /**
   * Which of the command's variables reach the tool. Called by the shim (to send no more than
   * this) and again by the broker (the shim is the command's to change).
   */
  forwardEnv(env: NodeJS.ProcessEnv | Record<string, string>): Record<string, string>;
  /**
   * Variables set for the tool whatever the user's environment says: programs it would start on
   * the command's terminal (a pager, an editor), which would run outside the sandbox and take
   * their commands from that terminal (less's `!`, vi's `:!`).
   */
  fixedEnv: Record<string, string>;
  /** The tool runs git in the command's repository: run it with tools/git.ts's protection. */
  runsGit: boolean;
  /**
   * What the tool needs of the user's own files, handed over so that its sandbox need not read
   * them (a file in the fork can be a link to any file the sandbox reads). `dir` is a private
   * directory the tool may write, removed afterwards. Returns variables to set for the tool.
   */
  prepare?(program: string, env: NodeJS.ProcessEnv, home: string, dir: string): Promise<Record<string, string>>;
}
